import Hummingbird
import NIOCore

/// A request's context: Hummingbird's, plus who is asking and what they may do (set by
/// ``AccessMiddleware``).
public struct DarkroomRequestContext: RequestContext {
  public var coreContext: CoreRequestContextStorage
  /// The client's address, the rate limit's key ("local" when there is none).
  public let client: String
  /// What the request may do; nil until authenticated.
  public var access: Access?
  /// The session of a request authenticated by the gallery's cookie (nil for a token).
  public var session: Session?

  public init(source: ApplicationRequestContextSource) {
    coreContext = .init(source: source)
    client = source.channel.remoteAddress?.ipAddress ?? "local"
  }

  /// JSON bodies are small; uploads are streamed, never collected.
  public var maxUploadSize: Int { 4 << 20 }
}
