/// The engine's version, recorded in adjustment data and shown by `darkroom --version`.
///
/// ```swift
/// print("darkroom", DarkroomVersion.string)
/// ```
package enum DarkroomVersion {
  /// The version number, such as `0.1.0` (semantic versioning).
  package static let string = "0.1.0"
}
