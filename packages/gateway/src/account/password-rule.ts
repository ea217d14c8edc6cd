// The one rule a new console password must meet, named in the refusal so the person knows what to change.
import { HttpProblem } from '../problem.js';

export const MIN_PASSWORD_LENGTH = 10;

/** Characters as a person counts them (grapheme clusters): an emoji or an accented letter is one. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of new Intl.Segmenter().segment(text)) count++;
  return count;
}

/** Throws 400 `weak_password` naming the rule the password breaks. */
export function checkPassword(password: string, email: string): void {
  const refuse = (detail: string): never => {
    throw new HttpProblem(400, 'weak_password', detail, { errors: [{ pointer: '/body/password', detail }] });
  };
  if (characterCount(password) < MIN_PASSWORD_LENGTH) {
    refuse(`The password is too short: use at least ${MIN_PASSWORD_LENGTH} characters.`);
  }
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) {
    refuse(
      'The password must not be the email address: choose something else of at least ' +
        `${MIN_PASSWORD_LENGTH} characters.`,
    );
  }
}
