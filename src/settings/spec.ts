/** The shape of one setting's description (schema.ts lists them). */
export type Kind = 'string' | 'int' | 'number' | 'bool' | 'list';

export interface SettingSpec<K extends Kind = Kind> {
  env: string;
  kind: K;
  default: K extends 'int' | 'number' ? number : K extends 'bool' ? boolean : K extends 'list' ? string[] : string;
  description: string;
  /** Shown masked by `config check`, never logged: a URL without its password, anything else whole. */
  secret?: boolean;
  /** Allowed values for strings, or [min, max] for numbers. */
  oneOf?: readonly string[];
  range?: readonly [number, number];
  /** What the parsed value must also satisfy: a problem to report, or undefined. */
  check?: (value: SettingSpec<K>['default']) => string | undefined;
}

export const spec = <K extends Kind>(s: SettingSpec<K>): SettingSpec<K> => s;
