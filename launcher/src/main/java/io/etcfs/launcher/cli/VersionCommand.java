package io.etcfs.launcher.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;

@Command(name = "version", description = "Print the etcfs version and the Java it runs on.",
    mixinStandardHelpOptions = true)
final class VersionCommand implements Runnable {
  @Override
  public void run() {
    System.out.println("etcfs " + version());
    System.out.println("java " + System.getProperty("java.version") + " ("
        + System.getProperty("java.vm.name") + ")");
  }

  static String version() {
    try (InputStream in = VersionCommand.class.getResourceAsStream(
        "/io/etcfs/launcher/version.properties")) {
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException("the etcfs build has no version resource", e);
    }
  }

  static final class Provider implements IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"etcfs " + version()};
    }
  }
}
