import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, plus who is asking and what they may do (set by
/// ``AccessMiddleware``).
package struct DarkroomRequestContext: RequestContext {
  package var coreContext: CoreRequestContextStorage
  /// The client's address, the rate limit's key ("local" when there is none).
  package let client: String
  /// What the request may do; nil until authenticated.
  package var access: Access?
  /// The session of a request authenticated by the gallery's cookie (nil for a token).
  package var session: Session?
  /// Whether a signed address let it in (``SignedAddresses``), not a token or a session: only
  /// such an answer is marked for a front server to keep.
  package var bySignature = false

  package init(source: ApplicationRequestContextSource) {
    coreContext = .init(source: source)
    client = source.channel.remoteAddress?.ipAddress ?? "local"
  }

  /// JSON bodies are small; uploads are streamed, never collected.
  package var maxUploadSize: Int { 4 << 20 }
}
