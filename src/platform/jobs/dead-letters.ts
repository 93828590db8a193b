// The consumer of "platform-dlq", where every other queue's messages go after their last delivery.
// Consumers record a message's final failure themselves (they see `isLastAttempt`), so this only
// keeps a trace of what arrived and acknowledges it; any body is accepted, whatever queue it left.
import { z } from "zod";
import { defineConsumer } from "./consume";

export const deadLetterConsumer = defineConsumer({
  queue: "platform-dlq",
  schema: z.unknown(),
  handle: async (body, { id, attempts }) => {
    console.error(JSON.stringify({ msg: "dead letter", queue: "platform-dlq", id, attempts, body }));
    return null;
  },
});
