import ArgumentParser
import Darkroom

#if canImport(Glibc)
  import Glibc
#endif

/// `darkroom`: image representations, filters and non-destructive edits on the command line.
struct DarkroomCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "darkroom",
    abstract: "Render representations of photos, apply filters, and undo edits.",
    discussion: prose(
      """
      Exit status: 0 on success, 1 if any file failed, 2 on a usage error. Errors go
      to standard error, one line each: `darkroom: FILE: problem`.
      """),
    version: DarkroomVersion.string,
    subcommands: [
      InfoCommand.self, RenderCommand.self, EditCommand.self, ApplyCommand.self, RevertCommand.self,
      HistoryCommand.self, AdjustmentsCommand.self, FiltersCommand.self, CacheCommand.self,
      CheckCommand.self, ScanCommand.self, ImportCommand.self, ListCommand.self, AlbumsCommand.self,
      AlbumCommand.self, FavouriteCommand.self, ShareCommand.self, DuplicatesCommand.self,
      TrashCommand.self,
      MetaCommand.self, WatchCommand.self, ServeCommand.self, SpaceCommand.self,
      ThumbnailsCommand.self, CatalogCommand.self,
      WorkerCommand.self,
    ])
}

// One reporter for every command: problems are `darkroom: FILE: problem` (exit 1), usage
// errors `darkroom: message` and the usage (exit 2; ArgumentParser's own code is 64), help
// and --version exit 0.
do {
  var command = try DarkroomCommand.parseAsRoot()
  // Formats outside the trusted list are parsed and decoded in sandboxed workers only, even
  // for one file (commands over a library send every file there: see their run()).
  if !(command is WorkerCommand) {
    Containment.useThisProgram(for: .untrustedFormats)
  }
  try command.run()
  finish(0)
} catch let failure as WorkFailed {
  finish(failure.status)
} catch let error as DarkroomError {
  reportError(error)
  finish(1)
} catch {
  let code = DarkroomCommand.exitCode(for: error)
  if code == .validationFailure {
    var message = DarkroomCommand.fullMessage(for: error)
    if message.hasPrefix("Error: ") { message = "darkroom: " + message.dropFirst("Error: ".count) }
    printError(message + "\n")
    finish(2)
  }
  DarkroomCommand.exit(withError: error)
}

/// Ends the process with `status` once standard output and error are flushed, without the C
/// libraries' exit-time destructors: libvips may still be starting on another thread (it
/// starts while a file is read), and a library it loads (GnuTLS) double-frees when its
/// destructor runs in the middle of that start, turning a right answer into exit 134.
func finish(_ status: Int32) -> Never {
  fflush(nil)
  _exit(status)
}
