// A labelled form control with its hint and its validation message wired up through aria attributes.
import type { ComponentChildren } from 'preact';

interface FieldProps {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'date' | 'datetime-local' | 'search';
  hint?: ComponentChildren;
  error?: string | undefined;
  required?: boolean;
  autoComplete?: string;
  multiline?: boolean;
  placeholder?: string;
}

export function Field(props: FieldProps) {
  const hintId = props.hint === undefined ? undefined : `${props.id}-hint`;
  const errorId = props.error === undefined ? undefined : `${props.id}-error`;
  const describedBy = [hintId, errorId].filter((id) => id !== undefined).join(' ') || undefined;
  const common = {
    id: props.id,
    name: props.id,
    value: props.value,
    required: props.required,
    placeholder: props.placeholder,
    'aria-invalid': props.error === undefined ? undefined : ('true' as const),
    'aria-describedby': describedBy,
    onInput: (event: Event) => props.onInput((event.currentTarget as HTMLInputElement | HTMLTextAreaElement).value),
  };
  return (
    <div class="field">
      <label for={props.id}>
        {props.label}
        {props.required === true ? <span aria-hidden="true"> *</span> : null}
      </label>
      {props.multiline === true ? (
        <textarea rows={4} {...common} />
      ) : (
        <input type={props.type ?? 'text'} autoComplete={props.autoComplete} {...common} />
      )}
      {props.hint === undefined ? null : (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
      {props.error === undefined ? null : (
        <p class="field-error" id={errorId}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** Validation messages by field id; a form sends nothing while any is set. */
export type FieldErrors = Record<string, string | undefined>;

export const hasErrors = (errors: FieldErrors): boolean => Object.values(errors).some((e) => e !== undefined);
