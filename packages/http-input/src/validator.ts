import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (formats as unknown as { default?: AddFormats }).default ?? (formats as unknown as AddFormats);

function makeAjv(coerce: boolean): Ajv {
  // verbose: errors carry their schema, so integer bounds can be named in full (describeIssue). One error per request
  // (allErrors off): a hostile body of a thousand bad entries costs one check, not a thousand.
  const ajv = new Ajv({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
}

const bodies = makeAjv(false);
const texts = makeAjv(true);

/**
 * Fastify's validator compiler for both servers: bodies are validated strictly (no type coercion: `{"content": 42}` is
 * an error, not "42"); query strings and path parameters coerce, since they arrive as text.
 */
export function validatorCompiler({ schema, httpPart }: { schema: unknown; httpPart?: string }): ValidateFunction {
  return (httpPart === 'body' ? bodies : texts).compile(schema as object);
}
