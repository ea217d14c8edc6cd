// A secret the gateway shows only once: the value, a copy button and a warning that it will not be shown again.
import { useEffect, useRef } from 'preact/hooks';
import { CopyBlock } from './CopyButton';

export function SecretOnce({ title, secret, onDone }: { title: string; secret: string; onDone: () => void }) {
  // Focus moves to the secret when it appears, so it is in view and screen readers announce it.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [secret]);
  return (
    <div class="secret" role="region" aria-label={title}>
      <h2 ref={heading} tabIndex={-1}>
        {title}
      </h2>
      <p class="notice warning">
        <strong>Copy it now.</strong> This secret is shown only once: it is not stored in a form anyone can read back,
        and it will not be shown again when you leave or reload this page.
      </p>
      <CopyBlock text={secret} label="secret" testId="secret" />
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}
