import Darkroom
import Synchronization

/// The renditions served most recently, in memory, by their tag (``Representations/tag``),
/// and by the versioned URL they were served at: a tag names the source's content and every
/// input of the spec, and a URL with `v=` names one version of one asset, so what either
/// maps to never goes stale, and a hit costs no file system or catalog call. Bounded by
/// bytes; the least recently used go first.
final class RenditionMemory: Sendable {
  private struct State {
    var entries: [String: (rendition: Rendition, tag: String, used: UInt64)] = [:]
    var bytes = 0
    var clock: UInt64 = 0
  }
  private let state = Mutex(State())
  let budget: Int

  init(budget: Int) { self.budget = budget }

  /// The rendition kept under `key`, and its tag.
  func rendition(_ key: String) -> (rendition: Rendition, tag: String)? {
    state.withLock { state in
      guard var entry = state.entries[key] else { return nil }
      state.clock += 1
      entry.used = state.clock
      state.entries[key] = entry
      return (entry.rendition, entry.tag)
    }
  }

  func keep(_ rendition: Rendition, as key: String, tag: String) {
    // Large renditions (full-size originals) are left to the disk cache.
    guard rendition.bytes.count <= budget / 16 else { return }
    state.withLock { state in
      state.clock += 1
      if let old = state.entries.updateValue((rendition, tag, state.clock), forKey: key) {
        state.bytes -= old.rendition.bytes.count
      }
      state.bytes += rendition.bytes.count
      guard state.bytes > budget else { return }
      // Over budget: the least recently used quarter goes (sorting is paid once a while).
      let oldest = state.entries.sorted { $0.value.used < $1.value.used }
      for (key, value) in oldest.prefix(max(1, oldest.count / 4)) {
        state.entries[key] = nil
        state.bytes -= value.rendition.bytes.count
      }
    }
  }
}
