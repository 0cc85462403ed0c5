/**
 * A handler body that is already JSON text. The router writes it as is instead of running
 * `JSON.stringify` on it, so a handler that caches its serialized answer (the robot view) pays for
 * serialization once per change, not once per request.
 */
export class JsonText<T = unknown> {
  /** Type only: the value the text encodes (`new JsonText<RobotView>(json)` states it). */
  declare private readonly encodes?: T;

  /** @param text valid JSON, exactly what `JSON.stringify` of the published value gives */
  constructor(readonly text: string) {}
}
