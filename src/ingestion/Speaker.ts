/** "Caroline: I went…" -> speaker Caroline. A time ("10:30") or URL before the colon is not a speaker. */
const SPEAKER = /^\s*([A-Z][\p{L}.'’-]*(?:[ -][A-Z][\p{L}.'’-]*){0,3})\s*:\s+([\s\S]+)$/u

export const splitSpeaker = (content: string): { speaker: string | null; body: string } => {
  const m = SPEAKER.exec(content)
  if (!m || /^(https?|note|re|fw|fwd|ps|update|todo|tip|warning|question|answer|q|a)$/i.test(m[1]!)) {
    return { speaker: null, body: content.trim() }
  }
  return { speaker: m[1]!, body: m[2]!.trim() }
}

const possessive = (name: string) => (name.endsWith("s") ? `${name}'` : `${name}'s`)

/** First person -> the speaker, conservatively; second person is left alone. */
export const resolveFirstPerson = (sentence: string, speaker: string) =>
  sentence
    .replace(/\bI'm\b|\bI am\b/g, `${speaker} is`)
    .replace(/\bI've\b/g, `${speaker} has`)
    .replace(/\bI'd\b/g, `${speaker} would`)
    .replace(/\bI'll\b/g, `${speaker} will`)
    .replace(/\bI was\b/g, `${speaker} was`)
    .replace(/\bI\b/g, speaker)
    .replace(/\b[Mm]yself\b/g, speaker)
    .replace(/\b[Mm]ine\b/g, possessive(speaker))
    .replace(/\b[Mm]y\b/g, possessive(speaker))
    .replace(/(\b(?:to|with|for|at|about|from|by|of|gave|told|showed|asked|helped|let|made|call|told|tell|taught|sent)\s+)me\b/gi, `$1${speaker}`)
