package io.etcfs.launcher.cli;

import io.etcfs.launcher.Failures;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code etcfs} command. */
@Command(
    name = "etcfs",
    mixinStandardHelpOptions = true,
    versionProvider = VersionCommand.Provider.class,
    description = "A POSIX cluster filesystem: data on one shared device, metadata in etcd.",
    subcommands = {
      VersionCommand.class,
      FormatCommand.class,
      MountCommand.class,
      UmountCommand.class,
      StatusCommand.class,
      FsckCommand.class,
      SwitchCommand.class,
      ExperimentCommand.class,
      ShellCommand.class,
      UpCommand.class,
      DownCommand.class,
      WaitCommand.class,
      TopCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  public static void main(String[] args) {
    // gRPC and Netty log at INFO through java.util.logging; the CLI speaks for itself.
    java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
    System.exit(run(args));
  }

  /** Runs the CLI and returns its exit status (tests call this directly). */
  public static int run(String... args) {
    CommandLine cli = new CommandLine(new Main());
    cli.setExecutionExceptionHandler(Main::onFailure);
    cli.setParameterExceptionHandler(Main::onBadUsage);
    return cli.execute(args);
  }

  /** Bad usage: one line naming the problem, one line saying where help is, status 2. */
  private static int onBadUsage(CommandLine.ParameterException e, String[] args) {
    PrintWriter err = e.getCommandLine().getErr();
    err.println("etcfs: " + e.getMessage());
    err.println("Try '" + e.getCommandLine().getCommandSpec().qualifiedName() + " --help'.");
    return 2;
  }

  /**
   * A failure: one line, no stack trace (set ETCFS_DEBUG=1 to see one), status 1. Errors the
   * user can act on carry their own message; anything else is named by its type. Wrappers
   * (InvocationTargetException, ExecutionException, ...) give way to their cause.
   */
  private static int onFailure(Exception e, CommandLine cli, CommandLine.ParseResult parsed) {
    PrintWriter err = cli.getErr();
    err.println("etcfs: " + describe(e));
    if (System.getenv("ETCFS_DEBUG") != null) {
      e.printStackTrace(err);
    }
    return 1;
  }

  static String describe(Throwable e) {
    return Failures.describe(e);
  }
}
