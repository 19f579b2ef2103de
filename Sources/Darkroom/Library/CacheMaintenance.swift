import FoundationEssentials

extension CacheSettings {
  /// The cache a file at `path` uses (nil: standard input or no file).
  func cache(for path: String?) -> RenditionCache {
    RenditionCache(folder: folder ?? Library.cacheFolder(for: path), limitBytes: limitBytes)
  }
}

/// What a rendition cache holds, as `darkroom cache stats` shows it.
package typealias CacheStats = RenditionCache.Stats

/// Looking after a rendition cache: the engine side of `darkroom cache`.
extension Library {
  /// What the cache that a file at `path` uses holds now (it lists every entry).
  package static func cacheStats(_ settings: CacheSettings, near path: String?) -> CacheStats {
    settings.cache(for: path).stats()
  }

  /// Evicts least recently used renditions until that cache is within its limit, and removes
  /// leftovers of interrupted writes. Returns the stats before and the bytes that remain.
  package static func pruneCache(_ settings: CacheSettings, near path: String?)
    -> (before: CacheStats, remaining: Int64)
  {
    let cache = settings.cache(for: path)
    let before = cache.stats()
    return (before, cache.evict(to: cache.limitBytes))
  }

  /// Removes every rendition from that cache; returns its folder.
  ///
  /// - Throws: A ``DarkroomError`` of kind `io` when a folder cannot be removed.
  @discardableResult
  package static func clearCache(_ settings: CacheSettings, near path: String?)
    throws(DarkroomError) -> URL
  {
    let cache = settings.cache(for: path)
    try cache.clear()
    return cache.folder
  }
}
