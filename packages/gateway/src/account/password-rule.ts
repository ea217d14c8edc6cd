// The one rule every account password meets wherever it is set (console sign-up, admin API), named in full in each
// refusal so the person knows what is accepted. Length and a list of common passwords, as NIST SP 800-63B asks; no
// composition rules. The list is zxcvbn-ts's (@zxcvbn-ts/language-common, lowercase, most common first).
import { dictionary } from '@zxcvbn-ts/language-common';
import { messageOf, problem } from '@mnemos/problems';

export const MIN_PASSWORD_LENGTH = 10;

const COMMON_PASSWORDS: ReadonlySet<string> = new Set(dictionary['passwords-common']);

/** Whitespace, control and invisible format characters (such as a zero-width space): nothing a person can see. */
const ONLY_BLANKS = /^[\s\p{Cc}\p{Cf}]*$/u;

/** Characters as a person counts them (grapheme clusters): an emoji or an accented letter is one. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of new Intl.Segmenter().segment(text)) count++;
  return count;
}

/** Throws 400 `weak_password` naming the part of the rule the password breaks. */
export function checkPassword(password: string, email: string): void {
  const refuse = (rule: 'tooShort' | 'onlyBlanks' | 'common' | 'isEmail'): never => {
    const params = { min: MIN_PASSWORD_LENGTH };
    const detail = messageOf('weak_password', rule, params);
    throw problem('weak_password', rule, params, { errors: [{ pointer: '/password', detail }] });
  };
  if (characterCount(password) < MIN_PASSWORD_LENGTH) refuse('tooShort');
  if (ONLY_BLANKS.test(password)) refuse('onlyBlanks');
  const typed = password.trim().toLowerCase();
  if (COMMON_PASSWORDS.has(typed)) refuse('common');
  if (typed === email.trim().toLowerCase()) refuse('isEmail');
}
