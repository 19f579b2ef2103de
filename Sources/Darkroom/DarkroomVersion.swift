/// The engine's version, recorded in adjustment data and shown by `darkroom --version`.
public enum DarkroomVersion {
  public static let string = "0.1.0"
}
