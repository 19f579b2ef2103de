import FoundationEssentials

/// The number of cores this process may use (its CPU affinity, as in a container): how wide
/// batches, renders and workers go. (In Concurrency/, below the Batch and Workers folders
/// that both read it.)
package enum ProcessorCount {
  /// The count, at least 1.
  package static var value: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

  /// Each one's share of the cores when `count` things run at once (at least 1): libvips'
  /// threads for each of a batch's files, or for each idle worker.
  package static func share(among count: Int) -> Int { max(1, value / max(1, count)) }
}
