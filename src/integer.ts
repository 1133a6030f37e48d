// Exact integer division, written twice (TypeScript and Lua) so both engines round the same way.
//
// `Math.floor(a / b)` can be off by one when a / b lands within one ulp of an integer; the correction
// step makes the result exact for any |a|, |b| below 2^53, and both engines run the same steps on the
// same IEEE-754 doubles, so they also agree bit for bit.

/** floor(a / b) for integers, b > 0. */
export function floorDiv(a: number, b: number): number {
  let q = Math.floor(a / b);
  if (q * b > a) q -= 1;
  else if ((q + 1) * b <= a) q += 1;
  return q;
}

/** ceil(a / b) for integers, b > 0. */
export function ceilDiv(a: number, b: number): number {
  return 0 - floorDiv(0 - a, b);
}

/** The Lua twins of the functions above, in the script prelude every policy's Lua twin may call. */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const integerLua = `
local function floor_div(a, b)
  local q = math.floor(a / b)
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end
local function ceil_div(a, b) return 0 - floor_div(0 - a, b) end
`;
