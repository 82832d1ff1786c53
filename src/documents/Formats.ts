/**
 * What an uploaded file is, told from its bytes: magic numbers for binaries,
 * the entries of a zip (Office Open XML) or the streams of an OLE2 compound
 * file (legacy Office). The name and content type only decide between text
 * formats, which have no signature.
 */
import { extname } from "node:path"

export type DocumentFormat =
  | "pdf"
  | "docx"
  | "doc"
  | "pptx"
  | "ppt"
  | "xlsx"
  | "xls"
  | "csv"
  | "html"
  | "txt"
  | "markdown"
  | "jpg"
  | "png"
  | "mp3"
  | "wav"

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + signature.length && signature.every((byte, i) => bytes[at + i] === byte)

const ascii = (text: string) => Array.from(text, (c) => c.charCodeAt(0))

const u16 = (bytes: Uint8Array, at: number) => bytes[at]! | (bytes[at + 1]! << 8)
const u32 = (bytes: Uint8Array, at: number) => (u16(bytes, at) | (u16(bytes, at + 2) << 16)) >>> 0

const OLE2 = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]

/** The entry names of a zip archive, from its central directory (or its local headers when that is damaged). */
export const zipEntries = (bytes: Uint8Array): Array<string> => {
  const decoder = new TextDecoder()
  const names: Array<string> = []
  const floor = Math.max(0, bytes.length - 22 - 0xffff)
  for (let end = bytes.length - 22; end >= floor; end--) {
    if (u32(bytes, end) !== 0x06054b50) continue
    let at = u32(bytes, end + 16)
    const count = u16(bytes, end + 10)
    for (let i = 0; i < count && at + 46 <= bytes.length && u32(bytes, at) === 0x02014b50; i++) {
      const nameLength = u16(bytes, at + 28)
      names.push(decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)))
      at += 46 + nameLength + u16(bytes, at + 30) + u16(bytes, at + 32)
    }
    if (names.length > 0) return names
    break
  }
  for (let at = 0; at + 30 <= bytes.length; at++) {
    if (u32(bytes, at) !== 0x04034b50) continue
    const nameLength = u16(bytes, at + 26)
    names.push(decoder.decode(bytes.subarray(at + 30, at + 30 + nameLength)))
    at += 29 + nameLength
  }
  return names
}

export interface CompoundFile {
  /** Names of the streams and storages at the root of the file. */
  readonly names: ReadonlyArray<string>
  readonly stream: (name: string) => Uint8Array | undefined
}

const END_OF_CHAIN = 0xfffffffe
const NO_ENTRY = 0xffffffff

/** A reader for OLE2 compound files (legacy .doc/.ppt/.xls): root entries and their streams. */
export const readCompoundFile = (bytes: Uint8Array): CompoundFile | undefined => {
  if (!startsWith(bytes, OLE2) || bytes.length < 512) return undefined
  const shift = u16(bytes, 0x1e)
  if (shift !== 9 && shift !== 12) return undefined
  const sectorSize = 1 << shift
  const sectorCount = Math.floor(bytes.length / sectorSize)
  const sectorAt = (sector: number) => (sector + 1) * sectorSize
  const validSector = (sector: number) => sector < sectorCount && sectorAt(sector) + sectorSize <= bytes.length

  const fatSectors: Array<number> = []
  for (let i = 0; i < 109; i++) {
    const sector = u32(bytes, 0x4c + i * 4)
    if (validSector(sector)) fatSectors.push(sector)
  }
  let difat = u32(bytes, 0x44)
  for (let hops = 0; validSector(difat) && hops < sectorCount; hops++) {
    const base = sectorAt(difat)
    for (let i = 0; i < sectorSize / 4 - 1; i++) {
      const sector = u32(bytes, base + i * 4)
      if (validSector(sector)) fatSectors.push(sector)
    }
    difat = u32(bytes, base + sectorSize - 4)
  }
  const fat = (sector: number): number => {
    const perSector = sectorSize / 4
    const holder = fatSectors[Math.floor(sector / perSector)]
    return holder === undefined ? END_OF_CHAIN : u32(bytes, sectorAt(holder) + (sector % perSector) * 4)
  }
  const chain = (start: number, next: (sector: number) => number, valid: (sector: number) => boolean) => {
    const sectors: Array<number> = []
    const seen = new Set<number>()
    for (let sector = start; sector !== END_OF_CHAIN && valid(sector) && !seen.has(sector); sector = next(sector)) {
      seen.add(sector)
      sectors.push(sector)
    }
    return sectors
  }
  const readChain = (start: number) => {
    const sectors = chain(start, fat, validSector)
    const out = new Uint8Array(sectors.length * sectorSize)
    sectors.forEach((sector, i) => out.set(bytes.subarray(sectorAt(sector), sectorAt(sector) + sectorSize), i * sectorSize))
    return out
  }

  const directory = readChain(u32(bytes, 0x30))
  interface Entry { readonly name: string; readonly type: number; readonly left: number; readonly right: number; readonly child: number; readonly start: number; readonly size: number }
  const entries: Array<Entry> = []
  for (let at = 0; at + 128 <= directory.length; at += 128) {
    const nameBytes = Math.min(64, u16(directory, at + 64))
    let name = ""
    for (let i = 0; i + 1 < nameBytes - 1; i += 2) name += String.fromCharCode(u16(directory, at + i))
    entries.push({
      name,
      type: directory[at + 66]!,
      left: u32(directory, at + 68),
      right: u32(directory, at + 72),
      child: u32(directory, at + 76),
      start: u32(directory, at + 116),
      size: u32(directory, at + 120)
    })
  }
  const root = entries[0]
  if (root === undefined || root.type !== 5) return undefined

  // Root children form a red-black tree linked through left/right siblings.
  const rootEntries: Array<Entry> = []
  const pending = [root.child]
  const visited = new Set<number>()
  while (pending.length > 0) {
    const id = pending.pop()!
    const entry = entries[id]
    if (id === NO_ENTRY || entry === undefined || visited.has(id)) continue
    visited.add(id)
    rootEntries.push(entry)
    pending.push(entry.left, entry.right)
  }

  const miniCutoff = u32(bytes, 0x38)
  const miniSize = 1 << u16(bytes, 0x20)
  let mini: { readonly stream: Uint8Array; readonly fat: Uint8Array } | undefined
  const miniParts = () => (mini ??= { stream: readChain(root.start).subarray(0, root.size), fat: readChain(u32(bytes, 0x3c)) })

  const stream = (name: string): Uint8Array | undefined => {
    const entry = rootEntries.find((e) => e.type === 2 && e.name === name) ??
      rootEntries.find((e) => e.type === 2 && e.name.toLowerCase() === name.toLowerCase())
    if (entry === undefined) return undefined
    if (entry.size >= miniCutoff) return readChain(entry.start).subarray(0, entry.size)
    const { fat: miniFat, stream: miniStream } = miniParts()
    const sectors = chain(
      entry.start,
      (sector) => (sector * 4 + 4 <= miniFat.length ? u32(miniFat, sector * 4) : END_OF_CHAIN),
      (sector) => (sector + 1) * miniSize <= miniStream.length
    )
    const out = new Uint8Array(sectors.length * miniSize)
    sectors.forEach((sector, i) => out.set(miniStream.subarray(sector * miniSize, (sector + 1) * miniSize), i * miniSize))
    return out.subarray(0, entry.size)
  }
  return { names: rootEntries.map((e) => e.name), stream }
}

const fromZip = (bytes: Uint8Array): DocumentFormat | undefined => {
  const tops = new Set(zipEntries(bytes).map((name) => name.split("/")[0]))
  if (tops.has("word")) return "docx"
  if (tops.has("ppt")) return "pptx"
  if (tops.has("xl")) return "xlsx"
  return undefined
}

const LEGACY_OFFICE: Record<string, DocumentFormat> = { ".doc": "doc", ".dot": "doc", ".ppt": "ppt", ".pps": "ppt", ".pot": "ppt", ".xls": "xls", ".xlt": "xls" }

const fromCompoundFile = (bytes: Uint8Array, extension: string): DocumentFormat | undefined => {
  const names = new Set(readCompoundFile(bytes)?.names.map((name) => name.toLowerCase()) ?? [])
  if (names.has("worddocument")) return "doc"
  if (names.has("powerpoint document")) return "ppt"
  if (names.has("workbook") || names.has("book")) return "xls"
  // An encrypted Office Open XML file is OLE2 too, and no parser here reads it.
  if (names.has("encryptedpackage")) return undefined
  return names.size === 0 ? LEGACY_OFFICE[extension] : undefined
}

const isMp3 = (bytes: Uint8Array) => {
  if (startsWith(bytes, ascii("ID3"))) return true
  // An MPEG audio frame header: 11 sync bits, layer III, a valid bitrate and sample rate.
  const [a, b, c] = [bytes[0], bytes[1], bytes[2]]
  if (a !== 0xff || b === undefined || c === undefined) return false
  return (b & 0xe0) === 0xe0 && (b & 0x06) === 0x02 && (b & 0x18) !== 0x08 && c >> 4 !== 0x0f && c >> 4 !== 0 && ((c >> 2) & 0x03) !== 0x03
}

const fromMagic = (bytes: Uint8Array, extension: string): DocumentFormat | undefined => {
  // Readers accept a PDF header a little way in (after a BOM or stray bytes); a text that merely mentions one is text.
  const pdfAt = new TextDecoder("latin1").decode(bytes.subarray(0, 1024)).indexOf("%PDF-")
  if (pdfAt === 0 || (pdfAt > 0 && !looksLikeText(bytes))) return "pdf"
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpg"
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WAVE"), 8)) return "wav"
  if (startsWith(bytes, ascii("PK\x03\x04")) || startsWith(bytes, ascii("PK\x05\x06"))) return fromZip(bytes)
  if (startsWith(bytes, OLE2)) return fromCompoundFile(bytes, extension)
  if (isMp3(bytes)) return "mp3"
  return undefined
}

/** Text, not binary: no NUL bytes (unless UTF-16 with a byte order mark) and next to no control characters. */
export const looksLikeText = (bytes: Uint8Array): boolean => {
  if (startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff])) return true
  const sample = bytes.subarray(0, 8192)
  let control = 0
  for (const byte of sample) {
    if (byte === 0) return false
    if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1b) || byte === 0x7f) control++
  }
  return control <= sample.length * 0.01
}

const looksLikeHtml = (bytes: Uint8Array) => {
  const head = new TextDecoder().decode(bytes.subarray(0, 2048)).replace(/^\uFEFF/, "").trimStart().toLowerCase()
  return /^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/.test(head)
}

const TEXT_EXTENSIONS: Record<string, DocumentFormat> = {
  ".csv": "csv",
  ".tsv": "csv",
  ".md": "markdown",
  ".markdown": "markdown",
  ".mdown": "markdown",
  ".html": "html",
  ".htm": "html",
  ".xhtml": "html",
  ".txt": "txt",
  ".text": "txt"
}

const TEXT_TYPES: Record<string, DocumentFormat> = {
  "text/csv": "csv",
  "text/tab-separated-values": "csv",
  "text/markdown": "markdown",
  "text/x-markdown": "markdown",
  "text/html": "html",
  "application/xhtml+xml": "html",
  "text/plain": "txt"
}

export const detectFormat = (bytes: Uint8Array, filename: string, contentType: string | undefined): DocumentFormat | undefined => {
  const extension = extname(filename).toLowerCase()
  const binary = fromMagic(bytes, extension)
  if (binary !== undefined) return binary
  if (bytes.length === 0 || !looksLikeText(bytes)) return undefined
  if (looksLikeHtml(bytes)) return "html"
  const mediaType = contentType?.split(";")[0]?.trim().toLowerCase() ?? ""
  return TEXT_EXTENSIONS[extension] ?? TEXT_TYPES[mediaType] ?? "txt"
}
