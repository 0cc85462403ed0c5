/**
 * Declares a route once, with its schemas, and types its handler from them:
 *
 *   defineRoute({
 *     method: 'GET', path: '/v1/robots/{robot_id}', params: RobotPathParams,
 *     responses: { 200: { description: 'The robot.', schema: RobotView } },
 *     ...
 *   }).handle(({ params }) => ({ status: 200, body: view(params.robot_id) }));   // body: RobotView
 *
 * The handler's `params`, `query`, `body` and `headers` are the `Static<>` types of the route's schemas (the
 * router validates them before the call), and its result must be one of the declared responses,
 * `{status, body}` with the body of that status's schema, checked at compile time. A status without
 * a schema (204) takes `body: null`; a body may be a {@link JsonText} of the schema's type
 * (pre-serialized JSON); a response declared with `contentType` takes a {@link RawBody}. Errors are
 * thrown (ApiError), not returned.
 *
 * Two steps (declare, then handle) because TypeScript infers the declared responses from the first
 * call; inside one generic call the handler's `status: 200` would be widened to `number` before the
 * responses are known.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { JsonText } from './json-text.js';
import type { RawBody } from './raw-body.js';
import type { ResponseStream } from './stream-body.js';
import type { ResponseSpec, ResponseSpecs, RouteContext, RouteDef } from './route.js';

/** The validated value of an optional schema (`Absent` when the route declares none). */
type In<S extends TSchema | undefined, Absent> = S extends TSchema ? Static<S> : Absent;

/** The body a handler returns for one declared response. */
export type BodyFor<R extends ResponseSpec> = R extends { schema: infer S extends TSchema }
  ? Static<S> | JsonText<Static<S>>
  : R extends { contentType: string }
    ? RawBody | ResponseStream
    : null;

/** Every answer a handler may give: one `{status, body}` per declared response. */
export type ResultFor<R extends ResponseSpecs> = {
  [K in keyof R & number]: { status: K; body: BodyFor<R[K]>; headers?: Record<string, string> };
}[keyof R & number];

/** The context a route's handler gets. */
export type ContextFor<
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
  B extends TSchema | undefined,
  H extends TSchema | undefined = undefined,
> = RouteContext<In<P, Record<string, never>>, In<Q, Record<string, never>>, In<B, undefined>, In<H, Record<string, never>>>;

/** A route's declaration: RouteDef's fields without the handler, `urgent` typed by the body schema. */
export interface RouteDeclaration<
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
  B extends TSchema | undefined,
  R extends ResponseSpecs,
  H extends TSchema | undefined = undefined,
> extends Omit<RouteDef, 'params' | 'query' | 'body' | 'headers' | 'responses' | 'urgent' | 'rateLimited' | 'handler'> {
  params?: P;
  query?: Q;
  body?: B;
  headers?: H;
  responses: R;
  urgent?: (body: In<B, undefined>) => boolean;
  rateLimited?: (body: In<B, undefined>) => boolean;
}

/** A declared route waiting for its handler. */
export interface DeclaredRoute<
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
  B extends TSchema | undefined,
  R extends ResponseSpecs,
  H extends TSchema | undefined = undefined,
> {
  /** The handler, typed by the declaration; returns the finished route. */
  handle(handler: (ctx: ContextFor<P, Q, B, H>) => ResultFor<R> | Promise<ResultFor<R>>): RouteDef;
}

const defined = new WeakSet<RouteDef>();

/** Declares a route; see the module comment. */
export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  const R extends ResponseSpecs = ResponseSpecs,
  H extends TSchema | undefined = undefined,
>(declaration: RouteDeclaration<P, Q, B, R, H>): DeclaredRoute<P, Q, B, R, H> {
  return {
    handle(handler) {
      // The one erasure point: the router validates params, query and body against these very
      // schemas before it calls the handler or `urgent`, so their narrower types hold for every call.
      const route = { ...declaration, handler } as unknown as RouteDef;
      defined.add(route);
      return route;
    },
  };
}

/**
 * `route` with `patch` applied (a wrapped handler, a declared header), still counted as declared with
 * {@link defineRoute} when `route` was: the wrapper receives what the route's handler receives.
 */
export function deriveRoute(route: RouteDef, patch: Partial<RouteDef>): RouteDef {
  const derived = { ...route, ...patch };
  if (defined.has(route)) defined.add(derived);
  return derived;
}

/** True for a route declared with {@link defineRoute} (the gateway's route list is checked with it). */
export function isDefinedRoute(route: RouteDef): boolean {
  return defined.has(route);
}
