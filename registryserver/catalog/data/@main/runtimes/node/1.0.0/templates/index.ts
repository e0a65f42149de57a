/**
 * Returns a friendly greeting for `name`.
 *
 * This is the package entry point; replace it with your own code.
 */
export function greet(name: string): string {
  const who = name.trim() || "world";
  return `Hello, ${who}!`;
}
