// The consumer of "platform-dlq", where every other queue's messages go after their last delivery.
// Consumers record a message's final failure themselves (they see `isLastAttempt`), so this only
// keeps a trace of what arrived and acknowledges it; any body is accepted, whatever queue it left.
import { log } from "../log";
import { z } from "zod";
import { defineConsumer } from "./consume";
import { deadLetterQueue } from "./queues";

export const deadLetterConsumer = defineConsumer({
  queue: deadLetterQueue,
  schema: z.unknown(),
  // The queue, message id and attempts come from the consumer loop's log scope.
  handle: async (body) => {
    log.error("dead letter", { body });
    return null;
  },
});
