import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct AdjustmentsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "adjustments",
    abstract: "Print the adjustment data of an edited file (canonical JSON).",
    discussion: prose(
      """
      Paste it onto another file with `darkroom edit OTHER.jpg --adjustment
      DATA.json`.

      --xmp prints it as an XMP sidecar Lightroom and Camera Raw read: its crop
      (fractions and angle), grayscale and tone as crs: settings, and the exact
      adjustment data in Darkroom's namespace, which `edit --adjustment X.xmp`
      takes back whole:
        darkroom adjustments IMG_0001.jpg --xmp > IMG_0001.xmp
      """))

  @Argument(help: "An edited file.")
  var file: String

  @Flag(help: "Print an XMP sidecar (crs: settings and the adjustment data) instead of JSON.")
  var xmp = false

  func run() throws {
    if xmp {
      guard let sidecar = try Library.lightroomSidecar(ofFile: try Library.resolve(file)) else {
        reportError(
          DarkroomError(.invalidArgument, file: file, "not edited: it has no adjustment data"))
        throw WorkFailed()
      }
      writeAll(STDOUT_FILENO, sidecar)
      return
    }
    guard let data = try Library.adjustments(ofFile: try Library.resolve(file)) else {
      reportError(
        DarkroomError(.invalidArgument, file: file, "not edited: it has no adjustment data"))
      throw WorkFailed()
    }
    print(String(decoding: data.canonicalJSON, as: UTF8.self))
  }
}
