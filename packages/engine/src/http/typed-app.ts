import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../engine.js';

/** The Fastify app with TypeBox schemas typing each route's request and answer. */
export const typed = (app: FastifyInstance) => app.withTypeProvider<TypeBoxTypeProvider>();
export type TypedApp = ReturnType<typeof typed>;

/** Adds routes to the engine's app (the MCP endpoint, a caller's own routes). */
export type RouteExtender = (app: TypedApp, engine: Engine) => void | Promise<void>;
