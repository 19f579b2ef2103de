import FoundationEssentials

/// Where renditions are cached and how large the cache may grow: what `render --cache-dir`
/// and `--cache-limit` set. `CacheSettings` is a `Sendable` value type.
public struct CacheSettings: Sendable, Hashable {
  /// The cache folder; nil: the library's (`.darkroom/cache`) for a file in one, else the
  /// user's (`$XDG_CACHE_HOME/darkroom`, else `~/.cache/darkroom`).
  public var folder: URL?
  /// Least recently used renditions are evicted past this size.
  public var limitBytes: Int64

  /// The default bound: 1 GiB.
  public static let defaultLimitBytes: Int64 = 1 << 30

  public init(folder: URL? = nil, limitBytes: Int64 = CacheSettings.defaultLimitBytes) {
    self.folder = folder
    self.limitBytes = limitBytes
  }
}
