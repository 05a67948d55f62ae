import type { ApiErrorBody } from "./types.js";

/** A failed API call: the server's ErrorModel, or a transport failure as a ServerError. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly type: string,
    readonly code: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function isErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== "object" || value === null || !("error" in value)) return false;
  const error: unknown = value.error;
  return typeof error === "object" && error !== null && "message" in error && "type" in error && "code" in error;
}

/** The ApiError for a response whose status is not 2xx. */
export async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body: unknown = JSON.parse(text);
    if (isErrorBody(body)) return new ApiError(body.error.message, body.error.type, body.error.code);
  } catch {
    // not JSON: fall through to the status line
  }
  return new ApiError(
    `${response.status} ${response.statusText}: ${text.slice(0, 200)}`,
    "ServerError",
    response.status,
  );
}
