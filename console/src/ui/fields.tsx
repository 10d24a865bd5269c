/** Labelled form controls: every control has a `<label for>`, and a hint is tied to it by `aria-describedby`. */
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

interface Common {
  label: string;
  hint?: string;
  required?: boolean;
  name?: string;
}

function Hint({ id, hint }: { id: string; hint: string | undefined }) {
  return hint ? (
    <small id={id} class="hint">
      {hint}
    </small>
  ) : null;
}

export function TextField(
  props: Common & {
    value: string;
    onInput: (value: string) => void;
    type?: 'text' | 'password' | 'number' | 'search' | 'url' | 'email';
    placeholder?: string;
    autoComplete?: string;
  },
) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={(props.type ?? 'text') as 'text'}
        value={props.value}
        required={props.required}
        placeholder={props.placeholder}
        autoComplete={props.autoComplete ?? 'off'}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(event) => props.onInput((event.currentTarget as HTMLInputElement).value)}
      />
      <Hint id={`${id}-hint`} hint={props.hint} />
    </div>
  );
}

export function TextArea(props: Common & { value: string; onInput: (value: string) => void; rows?: number }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        name={props.name}
        rows={props.rows ?? 6}
        value={props.value}
        required={props.required}
        spellcheck={false}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(event) => props.onInput((event.currentTarget as HTMLTextAreaElement).value)}
      />
      <Hint id={`${id}-hint`} hint={props.hint} />
    </div>
  );
}

export function SelectField(
  props: Common & { value: string; onChange: (value: string) => void; options: readonly (string | { value: string; label: string })[] },
) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={props.value}
        required={props.required}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onChange={(event) => props.onChange((event.currentTarget as HTMLSelectElement).value)}
      >
        {props.options.map((option) =>
          typeof option === 'string' ? (
            <option key={option} value={option}>
              {option}
            </option>
          ) : (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ),
        )}
      </select>
      <Hint id={`${id}-hint`} hint={props.hint} />
    </div>
  );
}

export function CheckField(props: { label: string; checked: boolean; onChange: (checked: boolean) => void }) {
  const id = useId();
  return (
    <div class="field check">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        onChange={(event) => props.onChange((event.currentTarget as HTMLInputElement).checked)}
      />
      <label for={id}>{props.label}</label>
    </div>
  );
}

/** A form that never navigates: `onSubmit` runs the action. */
export function Form(props: { label: string; onSubmit: () => void; children: ComponentChildren; submit: string; busy?: boolean }) {
  return (
    <form
      aria-label={props.label}
      class="form"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSubmit();
      }}
    >
      {props.children}
      <button type="submit" disabled={props.busy}>
        {props.submit}
      </button>
    </form>
  );
}

/** A whole number from a field; undefined when empty, NaN when not a number (the API names the field). */
export function wholeNumber(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}
