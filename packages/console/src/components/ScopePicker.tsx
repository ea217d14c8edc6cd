// Scopes as checkboxes, each with its description from the gateway's OpenAPI document.
import type { ScopeInfo } from '../types';

interface ScopePickerProps {
  idPrefix: string;
  scopes: ScopeInfo[];
  chosen: string[];
  onChange: (chosen: string[]) => void;
  error?: string | undefined;
}

export function ScopePicker({ idPrefix, scopes, chosen, onChange, error }: ScopePickerProps) {
  const errorId = `${idPrefix}-scopes-error`;
  return (
    <fieldset class="scopes" aria-describedby={error === undefined ? undefined : errorId}>
      <legend>Scopes</legend>
      {scopes.map((scope) => {
        const id = `${idPrefix}-scope-${scope.name.replace(/[^a-z]/g, '-')}`;
        return (
          <div class="check" key={scope.name}>
            <input
              type="checkbox"
              id={id}
              name="scopes"
              value={scope.name}
              checked={chosen.includes(scope.name)}
              aria-describedby={`${id}-desc`}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                onChange(on ? [...chosen, scope.name] : chosen.filter((s) => s !== scope.name));
              }}
            />
            <label for={id}>
              <code>{scope.name}</code>
            </label>
            <span class="hint" id={`${id}-desc`}>
              {scope.description}
            </span>
          </div>
        );
      })}
      {error === undefined ? null : (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      )}
    </fieldset>
  );
}
