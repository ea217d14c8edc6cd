// Sign in and sign up: the same form, posted to the session or the signup endpoint.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useQueryClient } from '@tanstack/preact-query';
import { useAction } from '../action';
import { api } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Field, hasErrors, type FieldErrors } from '../components/Field';
import { Page } from '../components/Page';
import { paths, safeNext } from '../paths';
import { sessionOpened } from '../session';
import type { SessionAnswer } from '../types';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
// The gateway's password rule. Length, blanks and the email are checked here first so a person learns them before
// sending; the list of common passwords stays on the gateway, whose refusal the form shows.
export const MIN_PASSWORD = 10;
const PASSWORD_RULE = `At least ${MIN_PASSWORD} characters, not only spaces, not a commonly used password and not your email address.`;
/** Whitespace, control and invisible format characters, as the gateway counts blanks. */
const ONLY_BLANKS = /^[\s\p{Cc}\p{Cf}]*$/u;

/** Characters as the gateway counts them (grapheme clusters), so both sides agree on the rule. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of new Intl.Segmenter().segment(text)) count++;
  return count;
}

function passwordRule(email: string, password: string): string | undefined {
  if (characterCount(password) < MIN_PASSWORD) return `Use at least ${MIN_PASSWORD} characters.`;
  if (ONLY_BLANKS.test(password)) return 'Use letters, digits or symbols, not only spaces.';
  if (password.trim().toLowerCase() === email.trim().toLowerCase())
    return 'Use a password other than your email address.';
  return undefined;
}

function validate(email: string, password: string, signingUp: boolean): FieldErrors {
  return {
    email: EMAIL.test(email.trim()) ? undefined : 'Enter an email address such as you@example.com.',
    password: password === '' ? 'Enter your password.' : signingUp ? passwordRule(email, password) : undefined,
  };
}

export function AuthForm({ mode, next }: { mode: 'signin' | 'signup'; next?: string | undefined }) {
  const signingUp = mode === 'signup';
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const { busy, error, run } = useAction();
  const client = useQueryClient();
  const location = useLocation();

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const found = validate(email, password, signingUp);
    setErrors(found);
    if (hasErrors(found)) return;
    await run(async () => {
      const path = signingUp ? '/v1/account/signup' : '/v1/account/session';
      const answer = await api<SessionAnswer>('POST', path, { body: { email: email.trim(), password } });
      sessionOpened(client, answer);
      location.route(signingUp ? paths.welcome : safeNext(next));
    });
  };

  return (
    <div class="auth">
      <p class="brand-line">Mnemos · persistent memory for AI agents</p>
      <Page title={signingUp ? 'Create your account' : 'Sign in'}>
        <form onSubmit={(e) => void submit(e)} noValidate>
          <ErrorNotice error={error} />
          <Field
            id="email"
            label="Email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onInput={setEmail}
            error={errors['email']}
          />
          <Field
            id="password"
            label="Password"
            type="password"
            required
            value={password}
            onInput={setPassword}
            autoComplete={signingUp ? 'new-password' : 'current-password'}
            error={errors['password']}
            hint={signingUp ? PASSWORD_RULE : undefined}
          />
          <button type="submit" class="primary" disabled={busy}>
            {signingUp ? 'Create account' : 'Sign in'}
          </button>
        </form>
        {signingUp ? (
          <p>
            Already have an account? <a href={paths.signIn}>Sign in</a>
          </p>
        ) : (
          <p>
            New to Mnemos? <a href={paths.signUp}>Create an account</a>
          </p>
        )}
      </Page>
    </div>
  );
}
