import FoundationEssentials

/// The number of cores this process may use (its CPU affinity, as in a container): how wide
/// batches, renders and workers go. (In Concurrency/, below the Batch and Workers folders
/// that both read it.)
package enum ProcessorCount {
  /// The count, at least 1.
  package static var value: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }
}
