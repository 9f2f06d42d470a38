package dev.dripline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;

/**
 * A successful answer of the API: its status and body, as sent and parsed.
 *
 * @param status the HTTP status (below 400)
 * @param body the body as sent, empty for none (e.g. a 202 or 204)
 * @param json the body parsed, {@link MissingNode} when empty
 */
record ApiReply(int status, String body, JsonNode json) {}
