import { Type, type TSchema } from '@sinclair/typebox';
import { Usage } from './schemas.js';

/**
 * Answers of reflect, of an operation's status and of the health routes, for the OpenAPI document: a client generated
 * from it gets a type for each. These routes write their answers with JSON.stringify (see `plainJsonAnswers`), so
 * these schemas document the answer and never filter it.
 */

const open = { additionalProperties: true } as const;
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const LlmUsage = Type.Object(
  {
    input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    total_tokens: Type.Integer(),
    cached_tokens: Type.Optional(Type.Integer()),
    thoughts_tokens: Type.Optional(Type.Integer()),
  },
  open,
);

export const ReflectAnswer = Type.Object(
  {
    text: Type.String(),
    citations: Type.Array(Type.String(), { description: 'Ids of the memories the answer is based on' }),
    based_on: Type.Optional(
      Type.Object(
        {
          memories: Type.Array(
            Type.Object(
              {
                id: Type.String(),
                text: Type.String(),
                type: Type.String(),
                fact_type: Type.String(),
                occurred_at: Nullable(Type.String()),
                source_id: Nullable(Type.String()),
                superseded_by: Nullable(Type.String()),
                score: Type.Number(),
              },
              open,
            ),
          ),
          mental_models: Type.Array(Type.Unknown()),
          directives: Type.Array(Type.Unknown()),
        },
        { ...open, description: 'The cited memories (include.facts)' },
      ),
    ),
    structured_output: Type.Optional(Type.Unknown({ description: 'The answer shaped by response_schema' })),
    usage: LlmUsage,
  },
  { ...open, $id: 'ReflectAnswer' },
);

/** Reflect's success: its JSON answer, or with `Accept: text/event-stream` the events that end with that answer. */
export const reflectSuccess = {
  200: {
    description: 'The answer; with Accept: text/event-stream, server-sent events (delta, then done or error)',
    content: {
      'application/json': { schema: ReflectAnswer },
      'text/event-stream': {
        schema: Type.String({
          description: 'Events `delta` ({text}), then `done` (the JSON answer) or `error` (a problem document)',
        }),
      },
    },
  },
};

export const OperationAnswer = Type.Object(
  {
    id: Type.String(),
    operation_id: Type.String({ description: 'The same as id' }),
    kind: Type.String(),
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('running'),
      Type.Literal('completed'),
      Type.Literal('failed'),
    ]),
    bank_id: Type.String(),
    space: Type.String(),
    items_count: Type.Integer(),
    memory_ids: Type.Array(Type.String()),
    fact_ids: Type.Array(Type.String()),
    facts_count: Type.Integer(),
    jobs: Type.Object({
      total: Type.Integer(),
      queued: Type.Integer(),
      running: Type.Integer(),
      succeeded: Type.Integer(),
      failed: Type.Integer(),
    }),
    errors: Type.Array(
      Type.Object({
        job_id: Type.String(),
        kind: Type.String(),
        memory_id: Nullable(Type.String()),
        status: Type.String(),
        attempts: Type.Integer(),
        error: Nullable(Type.String()),
      }),
    ),
    error_message: Type.Optional(Type.String({ description: "The failed jobs' errors (status failed)" })),
    usage: Usage,
    created_at: Type.String(),
    updated_at: Type.String(),
    finished_at: Nullable(Type.String()),
  },
  { ...open, $id: 'Operation' },
);

export const ReadinessAnswer = Type.Object(
  {
    status: Type.String(),
    database: Type.String(),
    db_acquire_ms: Type.Number(),
    embedding_model: Type.String(),
    pool: Type.Object({}, open),
  },
  open,
);

/**
 * /health's 503: a JSON body when the database is unreachable, a problem document (code `warming`) while the engine
 * starts.
 */
export const unreadyAnswer = {
  description: 'Not ready: the database is unreachable, or (a problem, code warming) the engine is starting',
  content: {
    'application/json': {
      schema: Type.Object({ status: Type.String(), database: Type.String(), reason: Type.String() }, open),
    },
    'application/problem+json': { schema: Type.Ref('Problem') },
  },
};

export const LivenessAnswer = Type.Object(
  { status: Type.String(), version: Type.String(), uptime_seconds: Type.Number() },
  open,
);

export const VersionAnswer = Type.Object(
  {
    api_version: Type.String(),
    version: Type.String({ description: "The engine package's version" }),
    features: Type.Object(
      {
        llm: Type.Boolean(),
        llm_provider: Nullable(Type.String()),
        encryption: Type.Boolean(),
        mcp: Type.Boolean(),
        multi_tenant: Type.Boolean(),
        embedding_model: Type.String(),
        embedding_dimension: Type.Integer(),
        database: Type.String(),
      },
      open,
    ),
  },
  open,
);

export const metricsSuccess = {
  200: {
    description: 'Prometheus metrics, text exposition format',
    content: { 'text/plain': { schema: Type.String() } },
  },
};
