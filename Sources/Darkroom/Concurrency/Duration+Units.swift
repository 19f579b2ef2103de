extension Duration {
  /// Whole seconds, as a `Double`.
  package var wholeSeconds: Double { Double(components.seconds) }

  /// Whole nanoseconds, what Dispatch and NIO take (exact for any duration under 292 years).
  package var nanoseconds: Int {
    Int(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
  }
}
