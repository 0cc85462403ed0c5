/**
 * Bounds on free-form values (template `parameters`, step `config`, action `arguments`, config
 * `values`): objects whose content the gateway stores and forwards without a schema. A schema marks
 * one with the `x-free-form` keyword (FreeForm in src/api/schemas/common.ts); validation.ts gives ajv
 * the keyword, which calls {@link freeFormProblem}. Bounded because deeply nested values overflow the
 * stack of recursive code further on (msgpack, canonical JSON).
 */

/** The schema keyword marking a free-form object and carrying its {@link FreeFormLimits}. */
export const FREE_FORM_KEYWORD = 'x-free-form';

export { FREE_FORM_LIMITS, freeFormProblem, type FreeFormLimits } from '../../store/free-form.js';
