/**
 * The payment processor a deployment runs with: Stripe when STRIPE_SECRET_KEY
 * and STRIPE_WEBHOOK_SECRET are set, otherwise none. The Stripe client is
 * loaded only then (it is about 20 MB and 0.3 s of start-up otherwise).
 */
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { PaymentProcessor } from "./PaymentProcessor.ts"

export const PaymentProcessorLive = Layer.unwrapEffect(Effect.flatMap(AppConfig, (config) =>
  Option.match(config.stripe, {
    onNone: () => Effect.succeed(PaymentProcessor.none),
    onSome: (settings) =>
      Effect.promise(() => import("./Stripe.ts")).pipe(
        Effect.map(({ makeStripe }) => Layer.succeed(PaymentProcessor, makeStripe(settings)))
      )
  })))
