/**
 * Credit periods. A period runs from an anchor's day of the month to the same
 * day of a later month; in a month without that day (the 31st in April) it
 * ends on the month's last day, and the next one is back on the anchor's day.
 * All in UTC.
 */

/** The anchor moved `months` months on, its day clamped to the month's last. */
export const addMonths = (anchor: Date, months: number): Date => {
  const year = anchor.getUTCFullYear()
  const month = anchor.getUTCMonth() + months
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  return new Date(Date.UTC(
    year,
    month,
    Math.min(anchor.getUTCDate(), last),
    anchor.getUTCHours(),
    anchor.getUTCMinutes(),
    anchor.getUTCSeconds(),
    anchor.getUTCMilliseconds()
  ))
}

/** The period of `anchor`'s monthly cycle that holds `now` (a `now` before the anchor is in its first period). */
export const periodAt = (anchor: Date, now: Date): { readonly start: Date; readonly end: Date } => {
  if (now.getTime() < anchor.getTime()) return { start: anchor, end: addMonths(anchor, 1) }
  let months = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + now.getUTCMonth() - anchor.getUTCMonth()
  if (addMonths(anchor, months).getTime() > now.getTime()) months--
  return { start: addMonths(anchor, months), end: addMonths(anchor, months + 1) }
}

/** The first instant of `now`'s calendar month (UTC): current_month_ops and line_items count from here. */
export const monthStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
