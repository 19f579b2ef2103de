/// The engine's version, recorded in adjustment data and shown by `darkroom --version`.
///
/// ```swift
/// print("darkroom", DarkroomVersion.string)
/// ```
public enum DarkroomVersion {
  /// The version number, such as `0.1.0` (semantic versioning).
  public static let string = "0.1.0"
}
