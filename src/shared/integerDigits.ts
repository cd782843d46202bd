/** Characters of a safe integer's decimal text (its sign among them), counted without making it. */
export const integerDigits = (n: number): number => {
  let digits = n < 0 ? 2 : 1;
  for (let rest = Math.abs(n); rest >= 10; rest = Math.floor(rest / 10)) digits++;
  return digits;
};
