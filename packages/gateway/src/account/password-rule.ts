// The one rule a new console password must meet, named in the refusal so the person knows what to change.
import { messageOf, problem } from '@mnemos/problems';

export const MIN_PASSWORD_LENGTH = 10;

/** Characters as a person counts them (grapheme clusters): an emoji or an accented letter is one. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of new Intl.Segmenter().segment(text)) count++;
  return count;
}

/** Throws 400 `weak_password` naming the rule the password breaks. */
export function checkPassword(password: string, email: string): void {
  const refuse = (rule: 'tooShort' | 'isEmail'): never => {
    const params = { min: MIN_PASSWORD_LENGTH };
    const detail = messageOf('weak_password', rule, params);
    throw problem('weak_password', rule, params, { errors: [{ pointer: '/password', detail }] });
  };
  if (characterCount(password) < MIN_PASSWORD_LENGTH) refuse('tooShort');
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) refuse('isEmail');
}
