/**
 * What a robot's VDA 5050 identity may hold (the registry stores it on the robot record; the
 * broker and master control in src/vda5050 use it). Its two parts are levels of every MQTT topic the robot uses
 * (`{interface}/{version}/{manufacturer}/{serialNumber}/{topic}`), so neither may contain the level
 * separator `/` or a wildcard (`+`, `#`): a robot named `Acme/+` would otherwise subscribe to other
 * robots' orders. Printable ASCII only (the VDA 5050 serial number is narrower still: `A-Z a-z 0-9 _ . : -`),
 * which also keeps the identity index's keys inside their range.
 */
/** Longest manufacturer or serial number accepted. */
export const VDA5050_PART_MAX = 128;

/** The pattern each part matches (a JSON Schema `pattern`, so /openapi.json states it too). */
export const VDA5050_PART_PATTERN = '^[\\x20-\\x22\\x24-\\x2a\\x2c-\\x2e\\x30-\\x7e]+$';

const PART = new RegExp(VDA5050_PART_PATTERN);

/** Why `value` is not a topic-safe identity part (naming `field`), or null when it is. */
export function bindingPartProblem(field: string, value: string): string | null {
  if (value.length === 0) return `${field} must not be empty`;
  if (value.length > VDA5050_PART_MAX) return `${field} must be at most ${VDA5050_PART_MAX} characters`;
  if (/[/+#]/.test(value)) return `${field} must not contain '/', '+' or '#' (it is an MQTT topic level)`;
  if (!PART.test(value)) return `${field} must be printable ASCII`;
  return null;
}

/**
 * Parses `MANUFACTURER/SERIAL` (the `--vda5050` option of `fleetgw admin add-robot`).
 * @throws Error naming `flag` and the part at fault
 */
export function parseBindingArgument(flag: string, text: string): { manufacturer: string; serialNumber: string } {
  const slash = text.indexOf('/');
  if (slash < 0) throw new Error(`${flag} must be MANUFACTURER/SERIAL, got '${text}'`);
  const binding = { manufacturer: text.slice(0, slash), serialNumber: text.slice(slash + 1) };
  const problem = bindingPartProblem(`${flag} manufacturer`, binding.manufacturer) ?? bindingPartProblem(`${flag} serial number`, binding.serialNumber);
  if (problem !== null) throw new Error(problem);
  return binding;
}
