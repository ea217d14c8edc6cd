// Copies a text to the clipboard and says so; where the clipboard is refused it says how to copy by hand.
import { useState } from 'preact/hooks';

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [status, setStatus] = useState('');
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(text);
      setStatus('Copied.');
    } catch {
      setStatus('The browser refused the clipboard: select the text and press Ctrl+C.');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={() => void copy()} aria-label={label}>
        Copy
      </button>
      <span role="status" class="hint">
        {status}
      </span>
    </span>
  );
}

/** A block of text to copy, with its button. */
export function CopyBlock({ text, label, testId }: { text: string; label: string; testId?: string }) {
  return (
    <div class="copy-block">
      <pre tabIndex={0} aria-label={label} data-testid={testId}>
        <code>{text}</code>
      </pre>
      <CopyButton text={text} label={`Copy ${label}`} />
    </div>
  );
}
