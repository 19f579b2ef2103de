import FoundationEssentials

/// Where renditions are cached and how large the cache may grow: what `render --cache-dir`
/// and `--cache-limit` set. `CacheSettings` is a `Sendable` value type.
package struct CacheSettings: Sendable, Hashable {
  /// The cache folder; nil: the library's (`.darkroom/cache`) for a file in one, else the
  /// user's (`$XDG_CACHE_HOME/darkroom`, else `~/.cache/darkroom`).
  package var folder: URL?
  /// Least recently used renditions are evicted past this size.
  package var limitBytes: Int64

  /// The default bound: 1 GiB.
  package static let defaultLimitBytes: Int64 = 1 << 30

  package init(folder: URL? = nil, limitBytes: Int64 = CacheSettings.defaultLimitBytes) {
    self.folder = folder
    self.limitBytes = limitBytes
  }
}
