import ArgumentParser
import Darkroom
import FoundationEssentials

struct AdjustmentsCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "adjustments",
    abstract: "Print the adjustment data of an edited file (canonical JSON).",
    discussion: """
      Paste it onto another file with `darkroom edit OTHER.jpg --adjustment
      DATA.json`.
      """)

  @Argument(help: "An edited file.")
  var file: String

  func run() throws {
    guard let data = try Library.adjustments(ofFile: try Library.resolve(file)) else {
      reportError(
        DarkroomError(.invalidArgument, file: file, "not edited: it has no adjustment data"))
      throw WorkFailed()
    }
    print(String(decoding: data.canonicalJSON, as: UTF8.self))
  }
}
