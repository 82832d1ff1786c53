/**
 * A space's rules: managed by its organization's owner (session only), and
 * applied to every write before anything of it is queued, stored or embedded.
 * Each write reads the space's enabled rules from the store, so a change
 * applies to the next write on every node. A space that does not exist yet
 * is screened with the rules it will be created with.
 */
import { Clock, Effect, Option } from "effect"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { spaceRef, type SpaceRef } from "../domain/Ids.ts"
import { type PrincipalShape, requireRole, requireSession } from "../domain/Principal.ts"
import type { CreateRuleRequest, Rule, UpdateRuleRequest } from "../domain/Rules.ts"
import type { WriteItem } from "../domain/SpaceProtocol.ts"
import { newId } from "../identity/Ids.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { policyTriggered } from "../webhooks/Events.ts"
import { RuleRepo } from "../../services/store/RuleRepo.ts"
import { type OutboxEvent, WebhookRepo } from "../../services/store/WebhookRepo.ts"
import type { Detector } from "./Detectors.ts"
import { patternProblem } from "./Detectors.ts"
import { compile, type Found, screenRecord, screenText, withFlags } from "./Screen.ts"

/** The rule every new space starts with (removable by its owner). */
export const defaultRules = (now: Date): ReadonlyArray<Rule> => [{
  id: newId("rul"),
  name: "Redact API keys",
  detector: "api_key",
  pattern: null,
  action: "redact",
  enabled: true,
  created_at: now.toISOString()
}]

export interface ScreenedWrite {
  /** The write with every redaction applied (unchanged when nothing matched). */
  readonly write: WriteItem
  /** Why the write is refused, naming the rule and its detector (never the matched text). */
  readonly blocked: string | undefined
  /**
   * The `security.policy_triggered` event when a rule touched the write. Not
   * queued here: the caller queues it in the transaction that stores (or
   * refuses) the write, so it is reported if and only if that happens.
   */
  readonly event: OutboxEvent | undefined
}

/**
 * What a `security.policy_triggered` event says of a write that was
 * redacted, flagged or both (at least one): one event per item, a redaction
 * being the stronger finding names the action; every type is listed.
 */
const findings = (redacted: ReadonlyArray<Detector>, flagged: ReadonlyArray<Detector>, before: string) => {
  const said = [
    ...(redacted.length === 0 ? [] : [`redacted ${redacted.join(", ")}`]),
    ...(flagged.length === 0 ? [] : [`flagged ${flagged.join(", ")} (marked in metadata.security_flags)`])
  ].join("; ")
  return {
    action: redacted.length > 0 ? "redact" as const : "flag" as const,
    detector: redacted[0] ?? flagged[0]!,
    matchedTypes: [...new Set([...redacted, ...flagged])],
    message: `${said} before ${before}`
  }
}

const checkPattern = (detector: Detector, pattern: string | null | undefined) => {
  if (detector !== "regex") {
    return pattern === undefined || pattern === null
      ? Effect.void
      : Effect.fail(new ValidationError({ message: `pattern is only for the regex detector, not ${detector}` }))
  }
  if (pattern === undefined || pattern === null) return Effect.fail(new ValidationError({ message: "the regex detector needs a pattern" }))
  const problem = patternProblem(pattern)
  return problem === undefined ? Effect.void : Effect.fail(new ValidationError({ message: problem }))
}

/**
 * Screening for a space's writes, on the rules in the store: the Rules
 * service's for requests, and the space entity's for uploaded documents.
 */
export const makeScreen = (repo: RuleRepo, webhooks: WebhookRepo) => {
  /**
   * Screens writes to a space: content, context and every string in the
   * metadata. Each write a rule touched carries its
   * `security.policy_triggered` event for the caller to queue.
   */
  const screen = Effect.fn("Rules.screen")(function*(space: SpaceRef, writes: ReadonlyArray<WriteItem>) {
    const stored = yield* repo.enabledIfSpace(space)
    const now = new Date(yield* Clock.currentTimeMillis)
    const rules = compile(Option.getOrElse(stored, () => defaultRules(now)))
    if (rules.length === 0) return writes.map((write): ScreenedWrite => ({ write, blocked: undefined, event: undefined }))
    const screened: Array<ScreenedWrite> = []
    for (const write of writes) {
      const content = screenText(rules, write.content)
      const context = screenText(rules, write.context)
      const found: Found = {
        redacted: new Set<Detector>([...content.redacted, ...context.redacted]),
        flagged: new Set<Detector>([...content.flagged, ...context.flagged]),
        blockedBy: content.blockedBy ?? context.blockedBy
      }
      const screenedMetadata = screenRecord(rules, write.metadata, found)
      const blockedBy = found.blockedBy
      if (blockedBy !== undefined) {
        const blocked = `blocked by the space's rule "${blockedBy.name}" (detector ${blockedBy.detector})`
        screened.push({
          write: { ...write, content: "", context: "", metadata: {} },
          blocked,
          event: policyTriggered(space, {
            action: "block",
            detector: blockedBy.detector,
            matchedTypes: [blockedBy.detector],
            documentId: write.documentId,
            message: `${blocked}; nothing of the item was stored`
          }, now)
        })
        continue
      }
      if (found.redacted.size === 0 && found.flagged.size === 0) {
        screened.push({ write, blocked: undefined, event: undefined })
        continue
      }
      const redacted = [...found.redacted]
      const flagged = [...found.flagged]
      screened.push({
        write: { ...write, content: content.text, context: context.text, metadata: withFlags(screenedMetadata, flagged) },
        blocked: undefined,
        event: policyTriggered(space, { ...findings(redacted, flagged, "the item was stored"), documentId: write.documentId }, now)
      })
    }
    yield* Effect.annotateCurrentSpan({ screened: writes.length, triggered: screened.filter((s) => s.event !== undefined).length })
    return screened
  })

  /**
   * Screens a document's chunks before any is stored: one block match refuses
   * the whole file; redactions and flags are reported as one event for the
   * document. `flags` tells the caller which flag rules a memory's text
   * matches, to mark it. The events are for the caller to queue with the
   * file's outcome.
   */
  const screenDocument = Effect.fn("Rules.screenDocument")(function*(
    space: SpaceRef,
    texts: ReadonlyArray<string>,
    documentId: string
  ) {
    const stored = yield* repo.enabledIfSpace(space)
    const now = new Date(yield* Clock.currentTimeMillis)
    const rules = compile(Option.getOrElse(stored, () => defaultRules(now)))
    const out: Array<string> = []
    const redacted = new Set<Detector>()
    const flagged = new Set<Detector>()
    const flagRules = rules.filter(({ rule }) => rule.action === "flag")
    const flags = (text: string): ReadonlyArray<Detector> =>
      [...new Set(flagRules.filter(({ find }) => find(text).length > 0).map(({ rule }) => rule.detector))]
    for (const text of texts) {
      const result = screenText(rules, text)
      if (result.blockedBy !== undefined) {
        const blocked = `blocked by the space's rule "${result.blockedBy.name}" (detector ${result.blockedBy.detector})`
        const event = policyTriggered(space, {
          action: "block",
          detector: result.blockedBy.detector,
          matchedTypes: [result.blockedBy.detector],
          documentId,
          message: `${blocked}; nothing of the file was stored`
        }, now)
        return { texts: [], blocked, events: [event], flags }
      }
      for (const d of result.redacted) redacted.add(d)
      for (const d of result.flagged) flagged.add(d)
      out.push(result.text)
    }
    if (redacted.size === 0 && flagged.size === 0) return { texts: out, blocked: undefined, events: [], flags }
    const event = policyTriggered(space, { ...findings([...redacted], [...flagged], "the file's memories were stored"), documentId }, now)
    return { texts: out, blocked: undefined, events: [event], flags }
  })

  /**
   * Queues events alone (one statement): for a refusal that stores nothing
   * else, or inside the caller's transaction when it runs in one.
   */
  const report = (space: SpaceRef, events: ReadonlyArray<OutboxEvent>) =>
    events.length === 0
      ? Effect.succeed(0)
      : Effect.flatMap(Clock.currentTimeMillis, (now) => webhooks.enqueue(space, events, new Date(now)))

  return { screen, screenDocument, report }
}

export class Rules extends Effect.Service<Rules>()("engram/security/Rules", {
  dependencies: [RuleRepo.Default, WebhookRepo.Default, Spaces.Default],
  effect: Effect.gen(function*() {
    const repo = yield* RuleRepo
    const webhooks = yield* WebhookRepo
    const spaces = yield* Spaces

    const ref = spaceRef
    /** The caller's space (403/404 otherwise), for its owner on a session. */
    const owned = (principal: PrincipalShape, spaceId: string) =>
      requireSession.pipe(
        Effect.zipRight(spaces.get(principal, spaceId)),
        Effect.zipRight(requireRole("owner")),
        Effect.as(ref(principal, spaceId))
      )
    const missing = (ruleId: string) => new NotFound({ message: `rule ${ruleId} not found` })

    const { report, screen } = makeScreen(repo, webhooks)

    return {
      screen,
      report,

      list: (principal: PrincipalShape, spaceId: string) =>
        Effect.flatMap(owned(principal, spaceId), (space) =>
          Effect.map(repo.list(space), (items) => ({ items, total: items.length }))),

      create: Effect.fn("Rules.create")(function*(principal: PrincipalShape, spaceId: string, request: CreateRuleRequest) {
        const space = yield* owned(principal, spaceId)
        yield* checkPattern(request.detector, request.pattern)
        const now = new Date(yield* Clock.currentTimeMillis)
        return yield* repo.create(space, {
          id: newId("rul"),
          name: request.name.trim(),
          detector: request.detector,
          pattern: request.pattern ?? null,
          action: request.action,
          enabled: request.enabled,
          created_at: now.toISOString()
        })
      }),

      update: Effect.fn("Rules.update")(function*(principal: PrincipalShape, spaceId: string, ruleId: string, request: UpdateRuleRequest) {
        const space = yield* owned(principal, spaceId)
        const current = yield* repo.find(space, ruleId)
        if (Option.isNone(current)) return yield* missing(ruleId)
        const detector = request.detector ?? current.value.detector
        // Moving to a built-in detector drops the pattern unless the request names one.
        const pattern = request.pattern !== undefined ? request.pattern : detector === "regex" ? current.value.pattern : null
        yield* checkPattern(detector, pattern)
        return yield* repo.update(space, {
          ...current.value,
          name: request.name?.trim() ?? current.value.name,
          detector,
          pattern,
          action: request.action ?? current.value.action,
          enabled: request.enabled ?? current.value.enabled
        })
      }),

      delete: Effect.fn("Rules.delete")(function*(principal: PrincipalShape, spaceId: string, ruleId: string) {
        const space = yield* owned(principal, spaceId)
        if (!(yield* repo.delete(space, ruleId))) return yield* missing(ruleId)
      })
    }
  })
}) {}
