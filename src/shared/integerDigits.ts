/** 10^0 … 10^15: a safe integer below 2^53 has at most 16 digits. */
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** Characters of a safe integer's decimal text (its sign among them), counted without making it. */
export const integerDigits = (n: number): number => {
  const abs = n < 0 ? -n : n;
  // Comparisons only (no division per digit): most cells have a few digits.
  let digits = 1;
  while (digits < 16 && abs >= POWERS_OF_TEN[digits]!) digits++;
  return n < 0 ? digits + 1 : digits;
};
