// Exact integer division, written twice (TypeScript and Lua) so both engines round the same way.
//
// `Math.floor(a / b)` is exact for integers |a| < 2^53 and b >= 1: a quotient n + r/b (0 < r < b) lies at least
// 1/b from the next integer, while the spacing of doubles around it is below 2/b whenever |a| < 2^53, so it cannot
// round onto that integer. Every caller keeps its operands below 2^53 (options are validated to keep products below
// 2^51), and both engines divide the same IEEE-754 doubles, so they agree bit for bit.

/** floor(a / b) for integers |a| < 2^53, b >= 1. */
export function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

/** ceil(a / b) for integers |a| < 2^53, b >= 1; never -0 (`Math.ceil(-1 / 2)` is), which no Redis reply holds. */
export function ceilDiv(a: number, b: number): number {
  return 0 - floorDiv(0 - a, b);
}

/**
 * The Lua twins of the functions above, in the script prelude every policy's Lua twin may call. A call is most of
 * what Lua spends on them, so `ceil_div` divides itself rather than calling `floor_div`. (`math` is
 * read when they run: a Redis function library may not read globals while it is loaded.)
 */
// Stryker disable next-line StringLiteral: Lua text; the differential suite checks it against a real Redis
export const integerLua = `
local function floor_div(a, b) return math.floor(a / b) end
local function ceil_div(a, b) return 0 - math.floor((0 - a) / b) end
`;
