import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// An album shared by link: its photos to whoever has the link, nothing else.
@Suite("Shared links", .offThePool)
struct SharedLinkTests {
  /// Four photos, two of them in the user album "Trip 2024".
  static func library() throws -> (ServedLibrary, inAlbum: [AssetID], others: [AssetID]) {
    let served = try ServedLibrary(
      samples: ["orientation-1.jpg", "orientation-3.jpg", "gps.jpg", "orientation-6.jpg"])
    let library = served.library
    let ids = try ["orientation-1.jpg", "orientation-3.jpg", "gps.jpg", "orientation-6.jpg"].map {
      try #require(try library.asset(atPath: served.folder.file($0))).id
    }
    try library.edit(.create("Trip 2024"))
    try library.edit(.add("Trip 2024", Array(ids.prefix(2))))
    return (served, Array(ids.prefix(2)), Array(ids.suffix(2)))
  }

  /// Every route the API documents, as a visitor with a link would try them: each path's
  /// parameters filled with `asset` (an id the link shows) where an id goes.
  static func documentedRoutes(asset: AssetID) throws -> [(method: HTTPRequest.Method, uri: String)]
  {
    let yaml = String(
      decoding: try Fixture.bytes(Fixture.root.path + "/docs/openapi.yaml"), as: UTF8.self)
    var routes: [(HTTPRequest.Method, String)] = []
    var path: String?
    for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("  /"), line.hasSuffix(":") {
        path = String(line.dropFirst(2).dropLast())
      } else if line.hasPrefix("    "), !line.hasPrefix("     "), let current = path {
        let word = line.trimmingCharacters(in: .whitespaces).dropLast()
        let method: HTTPRequest.Method? =
          switch word {
          case "get": .get
          case "post": .post
          case "put": .put
          case "patch": .patch
          case "delete": .delete
          default: nil
          }
        guard let method else { continue }
        let uri = current.replacingOccurrences(of: "{id}", with: asset.rawValue)
          .replacingOccurrences(of: "{representation}", with: "thumbnail")
          .replacingOccurrences(of: "{name}", with: "noir").replacingOccurrences(
            of: "{file}", with: "gallery.css")
        routes.append((method, uri))
      } else if !line.hasPrefix(" ") {
        path = nil
      }
    }
    return routes
  }

  @Test(
    "an owner makes a link (201, a 43-character token), lists it with its visits, and revokes it; a visitor with no session sees the album's photos and no other asset, page or route; a read-only token cannot make one; the trash is never shared"
  )
  func visitor() async throws {
    let (served, inAlbum, others) = try Self.library()
    try await served.test { client, _ in
      let made = try await client.execute(
        uri: "/api/shares", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["album": "Trip 2024", "days": 7]))
      #expect(made.status == .created, "\(made.text)")
      let url = try #require(made.object["url"] as? String)
      let id = try #require(made.object["id"] as? String)
      #expect(url.hasPrefix("/s/") && url.count == 3 + 43, "\(url)")
      #expect(id.count == 12 && made.object["download"] as? Bool == false)
      let token = String(url.dropFirst(3))
      // The library keeps the token's hash alone, in a file only its owner reads.
      let file = served.folder.file(".darkroom/shares.json")
      let stored = String(decoding: try Fixture.bytes(file), as: UTF8.self)
      #expect(!stored.contains(token) && stored.contains(ContentHash.of(text: token).hex))
      var info = stat()
      #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)

      // The visitor: no session, no token of the server's.
      let page = try await client.execute(uri: url, method: .get)
      #expect(page.status == .ok)
      #expect(page.headers[.robotsTag] == "noindex, nofollow")
      #expect(page.text.contains("<meta name=\"robots\" content=\"noindex, nofollow\">"))
      #expect(page.text.contains("<h1 class=\"title\">Trip 2024</h1>"))
      for shown in inAlbum { #expect(page.text.contains("\(url)/assets/\(shown)/thumbnail")) }
      for hidden in others { #expect(!page.text.contains(hidden.rawValue)) }
      #expect(!page.text.contains("<script"), "no script on a visitor's page")
      let image = try await client.execute(
        uri: "\(url)/assets/\(inAlbum[0])/thumbnail?size=256", method: .get)
      #expect(image.status == .ok && image.headers[.contentType] == "image/jpeg")
      let photo = try await client.execute(uri: "\(url)/photo/\(inAlbum[1])", method: .get)
      #expect(photo.status == .ok && photo.text.contains("\(url)/assets/\(inAlbum[1])/fullscreen"))
      #expect(!photo.text.contains("/full\""), "no download unless allowed")
      let original = try await client.execute(uri: "\(url)/assets/\(inAlbum[0])/full", method: .get)
      #expect(original.status == .forbidden)
      // Only the sizes and formats a visitor's page uses: not the original's pixels under
      // another name, nor the file's own without the owner's edit.
      for (uri, code) in [
        ("thumbnail?original=true", 400), ("fullscreen?size=4096", 400),
        ("thumbnail?size=600", 400), ("thumbnail?delivery=high", 400),
        ("fullscreen?size=2048", 200), ("aspect-thumbnail?size=512&format=png", 200),
      ] {
        let answer = try await client.execute(
          uri: "\(url)/assets/\(inAlbum[0])/\(uri)", method: .get)
        #expect(answer.status.code == code, "\(uri): \(answer.text)")
      }
      // A page "after" another asset: as if it did not exist (its date is not the
      // visitor's to learn).
      let after = try await client.execute(uri: "\(url)?after=\(others[0])", method: .get)
      #expect(after.status == .notFound)
      let afterOwn = try await client.execute(uri: "\(url)?after=\(inAlbum[0])", method: .get)
      #expect(afterOwn.status == .ok)
      // A HEAD (a link preview) is no visit.
      _ = try await client.execute(uri: url, method: .head)
      // Another asset by id, through every door the link has: as if it did not exist.
      for other in others {
        for uri in [
          "\(url)/assets/\(other)/thumbnail", "\(url)/assets/\(other)/fullscreen",
          "\(url)/assets/\(other)/full", "\(url)/photo/\(other)",
        ] {
          let refused = try await client.execute(uri: uri, method: .get)
          #expect(refused.status == .notFound, "\(uri)")
        }
      }
      for uri in [
        "\(url)/assets/\(inAlbum[0])/video", "\(url)/assets/\(inAlbum[0])/playback",
        "\(url)/assets/\(inAlbum[0])/exif-thumbnail", "\(url)/../../api/assets",
        "\(url)/photo/..%2F..%2Fapi%2Fassets",
      ] {
        let refused = try await client.execute(uri: uri, method: .get)
        #expect([401, 404].contains(refused.status.code), "\(uri): \(refused.status)")
      }
      // Every route of the API and the gallery: nothing answered to the visitor.
      for (method, uri) in try Self.documentedRoutes(asset: inAlbum[0]) {
        // (Public to all: the health check, the login page, the gallery's own files.)
        if ["/healthz", "/login"].contains(uri) || uri.hasPrefix("/static/") { continue }
        let answer = try await client.execute(uri: uri, method: method)
        let code = answer.status.code
        #expect(
          code == 401 || code == 403 || code == 404 || code == 405
            || (code == 303 && answer.headers[.location]?.hasPrefix("/login") == true),
          "\(method) \(uri): \(answer.status)")
      }
      // A token of the right shape that no link has; one cut short.
      for guess in ["/s/" + String(repeating: "A", count: 43), "/s/" + token.dropLast(), "/s/x"] {
        let refused = try await client.execute(uri: guess, method: .get)
        #expect(refused.status == .notFound, "\(guess)")
        #expect(refused.text.contains("This shared link does not exist, was revoked or expired."))
      }

      // The owner: the link with its visits (its album's page was opened once; a photo's
      // page or image is no visit), then revoked.
      let listed = try await client.execute(
        uri: "/api/shares", method: .get, headers: ServedLibrary.read)
      let links = try #require(listed.object["links"] as? [[String: Any]])
      #expect(links.count == 1 && links[0]["id"] as? String == id)
      #expect(links[0]["views"] as? Int == 1 && links[0]["url"] == nil, "\(links)")
      let readOnly = try await client.execute(
        uri: "/api/shares", method: .post, headers: ServedLibrary.read,
        body: jsonBody(["album": "Trip 2024"]))
      #expect(readOnly.status == .forbidden)
      for (album, status) in [("smart:trash", 400), ("No such album", 404)] {
        let refused = try await client.execute(
          uri: "/api/shares", method: .post, headers: ServedLibrary.write,
          body: jsonBody(["album": album]))
        #expect(refused.status.code == status, "\(album): \(refused.text)")
      }
      let revoked = try await client.execute(
        uri: "/api/shares/\(id)", method: .delete, headers: ServedLibrary.write)
      #expect(revoked.status == .noContent)
      let gone = try await client.execute(uri: url, method: .get)
      #expect(gone.status == .notFound)
      let goneImage = try await client.execute(
        uri: "\(url)/assets/\(inAlbum[0])/thumbnail", method: .get)
      #expect(goneImage.status == .notFound)
      let again = try await client.execute(
        uri: "/api/shares/\(id)", method: .delete, headers: ServedLibrary.write)
      #expect(again.status == .notFound)
    }
  }

  @Test(
    "a link with a password shows its form until the password is given (a wrong one is a 401), then a pass cookie for its address alone opens it; downloads when allowed; an expired link opens nothing"
  )
  func password() async throws {
    let (served, inAlbum, _) = try Self.library()
    let made = try served.library.share(
      album: "Trip 2024", password: "correct horse", allowsDownload: true)
    let url = "/s/" + made.token
    // Five wrong passwords, and (so that no test waits on a clock) one back a day.
    var configuration = served.configuration()
    configuration.failedLogins = (burst: 5, perSecond: 1.0 / 86_400)
    try await served.test(configuration) { client, _ in
      let form = try await client.execute(uri: url, method: .get)
      #expect(form.status == .ok && form.text.contains("type=\"password\""))
      #expect(!form.text.contains(inAlbum[0].rawValue))
      let locked = try await client.execute(
        uri: "\(url)/assets/\(inAlbum[0])/thumbnail", method: .get)
      #expect(locked.status == .unauthorized)
      let posted: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
      let wrong = try await client.execute(
        uri: url, method: .post, headers: posted, body: ByteBuffer(string: "password=horse"))
      #expect(wrong.status == .unauthorized)
      #expect(
        wrong.text.contains("That is not this album&#39;s password.")
          || wrong.text.contains("That is not this album's password."))
      let right = try await client.execute(
        uri: url, method: .post, headers: posted, body: ByteBuffer(string: "password=correct+horse")
      )
      #expect(right.status == .seeOther && right.headers[.location] == url)
      let cookie = try #require(right.headers[.setCookie])
      #expect(cookie.contains("; Path=\(url); HttpOnly; SameSite=Lax"), "\(cookie)")
      let pass = try #require(cookie.split(separator: ";").first.map(String.init))
      let opened = try await client.execute(uri: url, method: .get, headers: [.cookie: pass])
      #expect(opened.status == .ok && opened.text.contains("\(url)/assets/\(inAlbum[0])/thumbnail"))
      let original = try await client.execute(
        uri: "\(url)/assets/\(inAlbum[0])/full", method: .get, headers: [.cookie: pass])
      #expect(original.status == .ok)
      #expect(original.headers[.contentDisposition] == "attachment; filename=\"orientation-1.jpg\"")
      #expect(
        original.bytes == (try Fixture.bytes(served.folder.file("orientation-1.jpg"))),
        "the original, byte for byte")
      // A pass is of its link: another link's address does not take it.
      let other = try served.library.share(album: "Trip 2024", password: "correct horse")
      let elsewhere = try await client.execute(
        uri: "/s/" + other.token, method: .get, headers: [.cookie: pass])
      #expect(!elsewhere.text.contains(inAlbum[0].rawValue))
      // Wrong passwords: five (a minute, by default), from one client or at one link (one
      // was above);
      // past them none is checked, the right one included.
      for _ in 0..<4 {
        let guess = try await client.execute(
          uri: "/s/" + other.token, method: .post, headers: posted,
          body: ByteBuffer(string: "password=guess"))
        #expect(guess.status == .unauthorized)
      }
      let limited = try await client.execute(
        uri: "/s/" + other.token, method: .post, headers: posted,
        body: ByteBuffer(string: "password=correct+horse"))
      #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil)
    }
    // Expired (its expiry moved into the past): nothing, in the same words as a wrong token.
    try served.library.changingLinks { links in
      for index in links.indices { links[index].expires = 1_000_000_000 }
    }
    try await served.test { client, _ in
      let expired = try await client.execute(uri: url, method: .get)
      #expect(expired.status == .notFound)
      #expect(expired.text.contains("This shared link does not exist, was revoked or expired."))
    }
    #expect(throws: DarkroomError.self) {
      _ = try served.library.share(album: "Trip 2024", expires: 1_000_000_000)
    }
  }

  @Test(
    "a link follows its album when it is renamed and goes when it is deleted (a new album of that title is not shown); a damaged links file fails without a word of the library's"
  )
  func albumChanges() async throws {
    let (served, inAlbum, _) = try Self.library()
    let library = served.library
    let made = try library.share(album: "Trip 2024")
    try library.edit(.rename("Trip 2024", to: "Summer 2024"))
    #expect(try library.sharedLinks().map(\.album) == ["Summer 2024"])
    try await served.test { client, _ in
      let page = try await client.execute(uri: "/s/" + made.token, method: .get)
      #expect(page.text.contains("<h1 class=\"title\">Summer 2024</h1>"))
      #expect(page.text.contains(inAlbum[0].rawValue))
    }
    try library.edit(.delete("Summer 2024"))
    try library.edit(.create("Summer 2024"))
    try library.edit(.add("Summer 2024", [inAlbum[1]]))
    #expect(try library.sharedLinks().isEmpty)
    try await served.test { client, _ in
      let gone = try await client.execute(uri: "/s/" + made.token, method: .get)
      #expect(gone.status == .notFound)
    }
    // Damaged: the server's own failure, said in no word of its files.
    let again = try library.share(album: "Summer 2024")
    try Data("[{\"id\": 1".utf8).write(
      to: URL(fileURLWithPath: served.folder.file(".darkroom/shares.json")))
    try await served.test { client, _ in
      let failed = try await client.execute(uri: "/s/" + again.token, method: .get)
      #expect(failed.status == .internalServerError)
      #expect(!failed.text.contains("shares.json") && !failed.text.contains(".darkroom"))
    }
  }

  @Test(
    "the command line makes a link (the token on standard output, once), lists it and revokes it")
  func commandLine() throws {
    let (served, _, _) = try Self.library()
    let root = served.folder.path
    let made = try CLI.run(["share", "Trip 2024", "--days", "3", "--library", root])
    #expect(made.status == 0, "\(made.stderr)")
    let path = made.stdout.trimmingCharacters(in: .newlines)
    #expect(path.hasPrefix("/s/") && path.count == 46, "\(path)")
    let links = try served.library.sharedLinks()
    #expect(links.count == 1 && links[0].album == "Trip 2024")
    let expires = try #require(links[0].expires)
    #expect(abs(expires - Date().timeIntervalSince1970 - 3 * 86_400) < 120)
    let listed = try CLI.run(["share", "--list", "--library", root])
    #expect(
      listed.stdout.hasPrefix("\(links[0].id)  Trip 2024  0 visits, expires "), "\(listed.stdout)")
    #expect(!listed.stdout.contains(path.dropFirst(3)), "the token is shown once")
    let revoked = try CLI.run(["share", "--revoke", links[0].id, "--library", root])
    #expect(revoked.status == 0 && revoked.stderr == "share: revoked \(links[0].id)\n")
    #expect(try served.library.sharedLinks().isEmpty)
    let both = try CLI.run(["share", "Trip 2024", "--list", "--library", root])
    #expect(both.status == 2)
    #expect(both.stderr.contains("give an album to share, --list or --revoke ID (one of them)"))
  }
}

@Suite("Shared links, in chromium", .serialized, .timeLimit(.minutes(5)), .offThePool)
struct SharedLinkBrowserTests {
  @Test(
    "the owner makes a link from the album's Share dialog; a fresh browser with no session opens it and sees the album's photos and one at a time, and another photo's address is a 404; once revoked, the link opens nothing"
  )
  func shareAndVisit() throws {
    let (served, inAlbum, others) = try SharedLinkTests.library()
    let (server, owner, base) = try Browser.loggedIn(to: served)
    try owner.go(base + "/album?ref=Trip%202024")
    #expect(eventually { (try? owner.cellIDs().count) == 2 })
    try owner.click(css: "button[data-act='share']")
    #expect(eventually { (try? owner.text(try owner.find(".share-links"))) == "None yet." })
    try owner.click(css: ".share-dialog button[type=submit]")
    let address = ".share-dialog .share-url"
    #expect(
      eventually {
        ((try? owner.run("return document.querySelector('\(address)').value")) as? String)?
          .hasPrefix(base + "/s/") == true
      })
    let link = try #require(
      try owner.run("return document.querySelector('\(address)').value") as? String)
    #expect(link.count == base.count + 3 + 43, "\(link)")
    #expect(eventually { (try? owner.findAll(".share-links li button").count) == 1 })
    let listed = try owner.text(try owner.find(".share-links li"))
    #expect(listed.contains("0 visits · until "), "\(listed)")
    try owner.screenshot("share-dialog")

    // A visitor: another browser, never logged in.
    let visitor = try Browser()
    try visitor.go(link)
    let loaded =
      "return Array.from(document.querySelectorAll('.shared-grid img')).filter((i) => i.naturalWidth > 0).length"
    #expect(eventually { (try? visitor.run(loaded)) as? Int == 2 })
    #expect(try visitor.text(try visitor.find("h1")) == "Trip 2024")
    #expect(try visitor.text(try visitor.find(".summary")) == "2 items")
    #expect(
      try visitor.run(
        "return document.querySelector('meta[name=robots]').getAttribute('content')") as? String
        == "noindex, nofollow")
    try visitor.screenshot("shared-visitor")
    try visitor.resize(390, 844)
    try visitor.screenshot("shared-visitor-phone")
    try visitor.resize(1280, 900)
    try visitor.click(try visitor.findAll(".shared-grid a")[0])
    #expect(
      eventually {
        (try? visitor.run("return document.querySelector('.shared-photo img').naturalWidth"))
          as? Int ?? 0 > 0
      })
    #expect(try visitor.findAll("a[download]").isEmpty, "no download unless allowed")
    let ids = try visitor.run("return location.pathname") as? String ?? ""
    #expect(inAlbum.contains { ids.hasSuffix("/photo/\($0)") }, "\(ids)")
    try visitor.go(link + "/photo/\(others[0])")
    #expect(
      try visitor.text(try visitor.find("main .error")).hasPrefix("No such photo in this album"))
    // The visitor's browser has no session: the library's own pages send it to the login.
    try visitor.go(base + "/albums")
    #expect(eventually { visitor.url.hasPrefix(base + "/login") })

    // Revoked from the dialog: the link opens nothing.
    try owner.click(css: ".share-links li button")
    #expect(eventually { (try? owner.text(try owner.find(".share-links"))) == "None yet." })
    try visitor.go(link)
    #expect(
      try visitor.text(try visitor.find("main .error"))
        == "This shared link does not exist, was revoked or expired.")
    let consoleErrors = try owner.consoleErrors()
    #expect(consoleErrors == [])
    #expect(server.stop() == 0)
  }
}
