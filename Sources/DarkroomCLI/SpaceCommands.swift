import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Where a password comes from: the terminal without echo, a file's first line, or an open
/// file descriptor; never an argument (it would show in `ps` and in shell history).
struct PasswordOptions: ParsableArguments {
  @Option(help: ArgumentHelp("Read the password from this file's first line.", valueName: "file"))
  var passwordFile: String?

  @Option(help: ArgumentHelp("Read the password from this open descriptor.", valueName: "n"))
  var passwordFd: Int32?

  func validate() throws {
    if passwordFile != nil && passwordFd != nil {
      throw ValidationError("Give --password-file or --password-fd, not both")
    }
  }

  /// The password, from wherever these options say (else the terminal, asking `prompt`).
  func read(_ prompt: String = "Password: ") throws -> [UInt8] {
    if let passwordFile { return try Passwords.firstLine(readWholeFile(passwordFile)) }
    if let passwordFd { return try Passwords.firstLine(Passwords.readAll(passwordFd)) }
    return try Passwords.ask(prompt)
  }
}

enum Passwords {
  static func firstLine(_ bytes: [UInt8]) throws -> [UInt8] {
    let line = Array(bytes.prefix { $0 != UInt8(ascii: "\n") })
    return line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line
  }

  /// Every non-empty line (the passwords of other spaces, one a line).
  static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
    bytes.split(separator: UInt8(ascii: "\n")).map { line in
      line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : Array(line)
    }.filter { !$0.isEmpty }
  }

  static func readAll(_ fd: Int32) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while bytes.count < 1 << 16 {
      let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n >= 0 else {
        throw DarkroomError(
          .io, file: "descriptor \(fd)",
          "cannot read the password: \(String(cString: strerror(errno)))")
      }
      if n == 0 { break }
      bytes += chunk[0..<n]
    }
    return bytes
  }

  /// Asks on the terminal with echo off (restored however the read ends).
  static func ask(_ prompt: String) throws -> [UInt8] {
    let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
    guard tty >= 0 else {
      throw DarkroomError(
        .invalidArgument,
        "no terminal to ask for the password on: give --password-file FILE or --password-fd N")
    }
    defer { close(tty) }
    var saved = termios()
    let isTerminal = tcgetattr(tty, &saved) == 0
    if isTerminal {
      var quiet = saved
      quiet.c_lflag &= ~tcflag_t(ECHO)
      tcsetattr(tty, TCSAFLUSH, &quiet)
    }
    defer {
      if isTerminal {
        tcsetattr(tty, TCSAFLUSH, &saved)
        _ = Glibc.write(tty, "\n", 1)
      }
    }
    _ = prompt.withCString { Glibc.write(tty, $0, strlen($0)) }
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while Glibc.read(tty, &byte, 1) == 1, byte != UInt8(ascii: "\n"), line.count < 4096 {
      line.append(byte)
    }
    return line
  }
}

/// `--space DIR` on the commands that work in a space, with the password options.
struct SpaceOption: ParsableArguments {
  @Option(
    name: .customLong("space"),
    help: ArgumentHelp(
      "Work in the encrypted space the password opens in this folder.", valueName: "dir"))
  var folder: String?

  @OptionGroup var password: PasswordOptions

  /// The library over the space, or nil without --space.
  func library() throws -> Library? {
    guard let folder else { return nil }
    return try Library.open(space: folder, password: password.read())
  }

  /// The library over the space and the assets in it that `references` name (ids or
  /// names), or every asset not in the trash; nil without --space.
  func assets(_ references: [String]) throws -> (ids: [AssetID], library: Library)? {
    guard let library = try library() else { return nil }
    return (try library.named(references), library)
  }
}

extension Library {
  /// The assets `references` name (ids or names), or every asset not in the trash.
  func named(_ references: [String]) throws -> [AssetID] {
    references.isEmpty
      ? Array(try assets(matching: AssetQuery())) : try assetIDs(references)
  }
}

struct SpaceCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "space",
    abstract: "Encrypted spaces: photos and videos only a password opens.",
    discussion: prose(
      """
      A folder of spaces holds photos and videos, edits, catalog and renditions
      encrypted (Argon2id, XChaCha20-Poly1305). Each password opens its own space; the folder
      does not say how many there are. Passwords are read from the terminal, or
      --password-file FILE or --password-fd N; never from an argument.

        darkroom space create Private
        darkroom space add Private IMG_0001.jpg IMG_0002.MOV --move
        darkroom space list Private
        darkroom render --space Private IMG_0001.jpg --rep fullscreen -o screen.jpg
        darkroom edit --space Private --filter noir IMG_0001.jpg
        darkroom render --space Private IMG_0002.MOV --rep playback -o play.mp4
        darkroom space export Private -o decrypted/
        darkroom space passwd Private --rotate
        darkroom space remove Private

      list, render, edit, revert, apply and trash take --space DIR, with asset ids
      or names in place of files. A video's poster, playback version and edits are
      made from it decrypted into memory, never into a file. docs/spaces.md has the
      design and threat model.
      """),
    subcommands: [
      SpaceCreate.self, SpaceAdd.self, SpaceList.self, SpaceExport.self, SpacePasswd.self,
      SpaceRemove.self,
    ])
}

struct SpaceCreate: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "create",
    abstract: "Make a space with a new password (and the folder, if new).",
    usage: "darkroom space create <folder> [--keep <file>] [<options>]",
    discussion: prose(
      """
      In a folder that already holds spaces, the new one takes a key slot that none
      of the passwords in --keep FILE opens: the folder cannot tell which slots are
      in use, so a space whose password is not given there may be overwritten.
      """))

  @Argument(help: "The folder of spaces.")
  var folder: String

  @OptionGroup var password: PasswordOptions

  @Option(
    help: ArgumentHelp(
      "The passwords of the folder's other spaces, one a line.", valueName: "file"))
  var keep: String?

  @Option(help: ArgumentHelp("Argon2id passes.", valueName: "n"))
  var kdfPasses: UInt64 = KDFParameters.standard.ops

  @Option(help: ArgumentHelp("Argon2id memory in MiB.", valueName: "MiB"))
  var kdfMemory: Int = KDFParameters.standard.memory >> 20

  func validate() throws {
    guard (1...16).contains(kdfPasses) else { throw ValidationError("--kdf-passes: 1 to 16") }
    guard (8...4096).contains(kdfMemory) else { throw ValidationError("--kdf-memory: 8 to 4096") }
  }

  func run() throws {
    let exists = FileManager.default.fileExists(atPath: folder + "/header")
    if exists && keep == nil {
      throw DarkroomError(
        .invalidArgument, file: folder,
        "already holds spaces: give their passwords with --keep FILE (an empty file if none"
          + " is to be kept)")
    }
    let others = try keep.map { Passwords.lines(try readWholeFile($0)) } ?? []
    var secret = try password.read("New space's password: ")
    if password.passwordFile == nil && password.passwordFd == nil {
      guard try Passwords.ask("Again: ") == secret else {
        throw DarkroomError(.invalidArgument, "the two passwords differ")
      }
    }
    defer { for i in secret.indices { secret[i] = 0 } }
    _ = try Space.create(
      at: folder, password: secret, otherPasswords: others,
      kdf: KDFParameters(ops: kdfPasses, memory: kdfMemory << 20))
    printLine("\(folder): a new space (\(exists ? "added to the folder" : "a new folder"))")
  }
}

struct SpaceAdd: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "add", abstract: "Encrypt photos and videos into a space.",
    usage: "darkroom space add <folder> <files> ... [--move] [<options>]")

  @Argument(help: "The folder of spaces.")
  var folder: String

  @Argument(help: "Image and video files.")
  var files: [String]

  @OptionGroup var password: PasswordOptions

  @Flag(help: "Remove each file once it is durable in the space.")
  var move = false

  @Flag(help: "Print one JSON object per file.")
  var json = false

  func run() throws {
    let library = try Library.open(space: folder, password: password.read())
    try eachReportingFailures(files) { file in
      let (asset, added) = try library.add(file: file, move: move)
      if json {
        printLine(
          try jsonText(
            ["file": file, "id": asset.id.rawValue, "status": added ? "added" : "duplicate"],
            pretty: false))
      } else {
        printLine("\(file): \(added ? "added as" : "already in the space as") \(asset.id)")
      }
    }
  }
}

struct SpaceList: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list", abstract: "List a space's assets: id, size, edit, name.",
    usage: "darkroom space list <folder> [--trashed] [--json] [<options>]")

  @Argument(help: "The folder of spaces.")
  var folder: String

  @OptionGroup var password: PasswordOptions

  @Flag(help: "List the space's trash instead.")
  var trashed = false

  @Flag(help: "Print a JSON array of assets.")
  var json = false

  func run() throws {
    var query = AssetQuery()
    query.trashed = trashed
    try Self.print(
      Library.open(space: folder, password: password.read()), query, json: json)
  }

  /// The assets of a library over a space that `query` matches: a line each, or JSON as
  /// `list --json` prints a folder's assets (without files: a space has none).
  static func print(_ library: Library, _ query: AssetQuery, json: Bool) throws {
    let assets = Array(try library.assets(matching: query).assets(in: 0..<Int.max))
    if json {
      printLine(try jsonText(assets))
      return
    }
    for asset in assets {
      let v = asset.adjustmentVersion
      let edit = v > 0 ? "edited v\(v)" : "original"
      printLine("\(asset.id)  \(asset.displayWidth)x\(asset.displayHeight)  \(edit)  \(asset.name)")
    }
  }
}

struct SpaceExport: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Decrypt assets (as they look now) into a folder, never over a file.",
    usage: "darkroom space export <folder> [<assets> ...] -o <dir> [<options>]")

  @Argument(help: "The folder of spaces.")
  var folder: String

  @Argument(help: "Asset ids or names (default: all but the trash).")
  var assets: [String] = []

  @Option(name: .shortAndLong, help: ArgumentHelp("The folder to write to.", valueName: "dir"))
  var output: String

  @OptionGroup var password: PasswordOptions

  func run() throws {
    let library = try Library.open(space: folder, password: password.read())
    let ids = try library.named(assets)
    try library.makeExportFolder(output)
    try eachReportingFailures(ids) { id in
      printLine("\(id): \(try library.export(id, to: output))")
    }
  }
}

struct SpacePasswd: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "passwd",
    abstract: "Change a space's password, or its key with --rotate.",
    usage: "darkroom space passwd <folder> [--rotate] [<options>]",
    discussion: prose(
      """
      Without --rotate, the same space key is sealed under the new password and
      nothing is re-encrypted: a copy of the folder's header taken before still
      opens everything with the old password. With --rotate, every object is
      encrypted again under a new key, and what the old key sealed is removed:
      the old header and password then open nothing. It reads and writes the
      whole space; cut off, it is safe to run again. Give the same password
      twice to rotate the key alone.
      """))

  @Argument(help: "The folder of spaces.")
  var folder: String

  @OptionGroup var password: PasswordOptions

  @Option(
    help: ArgumentHelp("Read the new password from this file's first line.", valueName: "file"))
  var newPasswordFile: String?

  @Flag(help: "Re-encrypt everything under a new key (see above).")
  var rotate = false

  func run() throws {
    let space = try Space.open(folder, password: password.read("Current password: "))
    let new: [UInt8]
    if let newPasswordFile {
      new = try Passwords.firstLine(readWholeFile(newPasswordFile))
    } else {
      new = try Passwords.ask("New password: ")
      guard try Passwords.ask("Again: ") == new else {
        throw DarkroomError(.invalidArgument, "the two passwords differ")
      }
    }
    if rotate {
      let rotated = try space.rotateKey(password: new)
      printLine("\(folder): a new key seals the space's \(rotated.count) assets")
      rotated.close()
    } else {
      try space.changePassword(to: new)
      printLine("\(folder): the password is changed")
    }
  }
}

struct SpaceRemove: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "remove",
    abstract: "Remove a space: its key slot, objects and catalog rows.",
    usage: "darkroom space remove <folder> [<options>]",
    discussion: prose(
      """
      The space the password opens is removed for good: its key slot is filled
      with random bytes, as unused slots are, and its encrypted objects and
      catalog rows are deleted. The folder's other spaces are untouched. Export
      what you want to keep first (darkroom space export).
      """))

  @Argument(help: "The folder of spaces.")
  var folder: String

  @OptionGroup var password: PasswordOptions

  func run() throws {
    let space = try Space.open(folder, password: password.read("Password of the space to remove: "))
    let count = space.count
    try space.remove()
    printLine("\(folder): the space and its \(count) assets are removed")
  }
}
