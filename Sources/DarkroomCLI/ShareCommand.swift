import ArgumentParser
import Darkroom
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

struct ShareCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "share",
    abstract: "Share an album by link (read-only), list the links, or revoke one.",
    usage: """
      darkroom share <album> [--days N] [--password-file FILE] [--download]
      darkroom share --list [--album <album>] [<options>]
      darkroom share --revoke <id> [<options>]
      """,
    discussion: prose(
      """
      A link shows one album (a title, folder:PATH or smart:NAME) to whoever has it,
      at /s/TOKEN on `darkroom serve`: its photos and nothing else, with no login.
      The token (256 random bits) is printed once; the library keeps only its hash,
      so a lost link is revoked and made again. --days makes it stop working; a
      password (read from a file's first line, never from the command line) is asked
      of each visitor; --download lets visitors download the originals. --list shows
      each link's id, album, expiry and visits.

        darkroom share "Trip 2024" --days 7
        darkroom share folder:2024/06 --password-file pw.txt --download
        darkroom share --list
        darkroom share --revoke 3f2a9c01b7de
      """))

  @Argument(help: "The album to share.")
  var album: String?

  @Option(help: ArgumentHelp("Stop working after this many days (1 to 3650).", valueName: "N"))
  var days: Int?

  @Option(
    help: ArgumentHelp(
      "A file whose first line is the password visitors must give.", valueName: "file"))
  var passwordFile: String?

  @Flag(help: "Let visitors download the originals.")
  var download = false

  @Flag(help: "List the links (with --album, that album's).")
  var list = false

  @Option(
    name: .customLong("album"),
    help: ArgumentHelp("With --list: only this album's links.", valueName: "album"))
  var listedAlbum: String?

  @Option(help: ArgumentHelp("Revoke the link with this id.", valueName: "id"))
  var revoke: String?

  @Flag(help: "Print JSON.")
  var json = false

  @OptionGroup var libraryOption: LibraryOption

  func validate() throws {
    let modes = [album != nil, list, revoke != nil].filter { $0 }.count
    guard modes == 1 else {
      throw ValidationError("give an album to share, --list or --revoke ID (one of them)")
    }
    if let days, !(1...3650).contains(days) { throw ValidationError("--days takes 1 to 3650") }
    if album == nil, days != nil || passwordFile != nil || download {
      throw ValidationError("--days, --password-file and --download go with an album to share")
    }
  }

  struct Listed: Encodable {
    var id: String
    var album: String
    var created: Double
    var expires: Double?
    var password: Bool
    var download: Bool
    var views: Int
    var path: String?
    init(_ link: SharedLink, token: String? = nil) {
      (id, album, created, expires) = (link.id, link.album, link.created, link.expires)
      (password, download, views) = (link.hasPassword, link.allowsDownload, link.views)
      path = token.map { "/s/" + $0 }
    }
  }

  func run() throws {
    let library = try libraryOption.library()
    if let revoke {
      try library.revokeSharedLink(revoke)
      if !json { printError("share: revoked \(revoke)\n") }
      return
    }
    if list {
      let links = try library.sharedLinks(album: listedAlbum)
      if json { return print(try jsonText(links.map { Listed($0) })) }
      for link in links {
        var notes = ["\(link.views) visit\(link.views == 1 ? "" : "s")"]
        if let expires = link.expires {
          notes.append(
            (link.hasExpired() ? "expired " : "expires ")
              + Date(timeIntervalSince1970: expires).formatted(.iso8601))
        }
        if link.hasPassword { notes.append("password") }
        if link.allowsDownload { notes.append("downloads") }
        print("\(link.id)  \(link.album)  \(notes.joined(separator: ", "))")
      }
      return
    }
    guard let album else { return }
    var password: String?
    if let passwordFile {
      password = String(
        decoding: try Passwords.firstLine(readWholeFile(passwordFile)), as: UTF8.self)
    }
    let expires = days.map { Date().timeIntervalSince1970 + Double($0) * 86_400 }
    let made = try library.share(
      album: album, expires: expires, password: password, allowsDownload: download)
    if json { return print(try jsonText(Listed(made.link, token: made.token))) }
    print("/s/\(made.token)")
    printError(
      "share: \(made.link.album) at /s/\(made.token) on darkroom serve (id \(made.link.id); the token is shown once)\n"
    )
  }
}
