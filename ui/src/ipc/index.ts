// The UI's one door to Rust: only this module imports the generated bindings.
import { commands } from "./bindings";
import type {
  IpcError,
  CatalogModel_Serialize,
  CheckView_Serialize,
  CompactHerePreview_Serialize,
  CompactResult_Serialize,
  CompactionPreview_Serialize,
  CutPreview_Serialize,
  ContextMessage_Serialize,
  ContextView_Serialize,
  ContextWindowView_Serialize,
  Continued_Serialize,
  EntryDetail_Serialize,
  ExtensionLocation_Serialize,
  ForgettingView_Serialize,
  GrowthView_Serialize,
  GraphRow_Serialize,
  GraphWindow_Serialize,
  HooksView_Serialize,
  IndexStatus_Serialize,
  InstallResult_Serialize,
  ItemView_Serialize,
  KeyState_Serialize,
  LedgerView_Serialize,
  LibraryHit_Serialize,
  LibraryListing_Serialize,
  LibraryUiEvent_Serialize,
  ListingQuery_Serialize,
  ModelChoice_Serialize,
  NavigateResult_Serialize,
  NoticeSettings_Serialize,
  Navigation_Serialize,
  OpenedSession_Serialize,
  PiExtensionStatus_Serialize,
  ProjectRow_Serialize,
  QualityMarkView_Serialize,
  ResummaryView_Serialize,
  ReviewPrefs_Serialize,
  ReviewEvent_Serialize,
  ReviewPrompt_Serialize,
  ReviewStatus_Serialize,
  ReviewView_Serialize,
  ScoreView_Serialize,
  JudgedView_Serialize,
  SearchRequest_Serialize,
  SectionView_Serialize,
  Selection_Serialize,
  SendResult_Serialize,
  SessionPreview_Serialize,
  SessionRow_Serialize,
  SpanView_Serialize,
  SummarizerConfig_Serialize,
  SummaryDiffView_Serialize,
  SummaryProgress_Serialize,
  SummaryQualityView_Serialize,
  SummaryView_Serialize,
  SummaryWrite_Serialize,
  ScoreByKind_Serialize,
  VersionView_Serialize,
  BothFilesView_Serialize,
  ComparisonView_Serialize,
  FileLink_Serialize,
  FilesView_Serialize,
  ForkView_Serialize,
  ForkedFrom_Serialize,
  RecallDone_Serialize,
  RecallPreview_Serialize,
  SideView_Serialize,
  SummaryLink_Serialize,
} from "./bindings";
export type * from "./bindings";

// One name per Rust type. The bindings give a type that crosses IPC both ways twice, as Rust
// sends it (`X_Serialize`: every field present, `null` when empty) and as Rust reads it
// (`X_Deserialize`: optional fields), and name the union of both `X`. The UI reads what Rust
// sends, and a value of that shape is also what Rust reads, so here `X` is the sent shape; these
// names take the place of the bindings' unions. Only a channel handed to a command keeps the
// `X_Deserialize` the command's parameter names. A new pair in the bindings gets its line here
// (ui/test/structure.test.ts checks).
export type CatalogModel = CatalogModel_Serialize;
export type CheckView = CheckView_Serialize;
export type CompactHerePreview = CompactHerePreview_Serialize;
export type CompactResult = CompactResult_Serialize;
export type CompactionPreview = CompactionPreview_Serialize;
export type CutPreview = CutPreview_Serialize;
export type ContextMessage = ContextMessage_Serialize;
export type ContextView = ContextView_Serialize;
export type ContextWindowView = ContextWindowView_Serialize;
export type Continued = Continued_Serialize;
export type EntryDetail = EntryDetail_Serialize;
export type ExtensionLocation = ExtensionLocation_Serialize;
export type ForgettingView = ForgettingView_Serialize;
export type GrowthView = GrowthView_Serialize;
export type GraphRow = GraphRow_Serialize;
export type GraphWindow = GraphWindow_Serialize;
export type HooksView = HooksView_Serialize;
export type IndexStatus = IndexStatus_Serialize;
export type InstallResult = InstallResult_Serialize;
export type ItemView = ItemView_Serialize;
export type KeyState = KeyState_Serialize;
export type LedgerView = LedgerView_Serialize;
export type LibraryHit = LibraryHit_Serialize;
export type LibraryListing = LibraryListing_Serialize;
export type LibraryUiEvent = LibraryUiEvent_Serialize;
export type ListingQuery = ListingQuery_Serialize;
export type ModelChoice = ModelChoice_Serialize;
export type NavigateResult = NavigateResult_Serialize;
export type NoticeSettings = NoticeSettings_Serialize;
export type Navigation = Navigation_Serialize;
export type OpenedSession = OpenedSession_Serialize;
export type PiExtensionStatus = PiExtensionStatus_Serialize;
export type ProjectRow = ProjectRow_Serialize;
export type QualityMarkView = QualityMarkView_Serialize;
export type ResummaryView = ResummaryView_Serialize;
export type ReviewEvent = ReviewEvent_Serialize;
export type ReviewPrefs = ReviewPrefs_Serialize;
export type ReviewPrompt = ReviewPrompt_Serialize;
export type ReviewStatus = ReviewStatus_Serialize;
export type ReviewView = ReviewView_Serialize;
export type ScoreView = ScoreView_Serialize;
export type JudgedView = JudgedView_Serialize;
export type SearchRequest = SearchRequest_Serialize;
export type SectionView = SectionView_Serialize;
export type Selection = Selection_Serialize;
export type SendResult = SendResult_Serialize;
export type SessionPreview = SessionPreview_Serialize;
export type SessionRow = SessionRow_Serialize;
export type SpanView = SpanView_Serialize;
export type ScoreByKind = ScoreByKind_Serialize;
export type SummarizerConfig = SummarizerConfig_Serialize;
export type SummaryDiffView = SummaryDiffView_Serialize;
export type SummaryProgress = SummaryProgress_Serialize;
export type SummaryQualityView = SummaryQualityView_Serialize;
export type SummaryView = SummaryView_Serialize;
export type SummaryWrite = SummaryWrite_Serialize;
export type VersionView = VersionView_Serialize;
// Compare, Bring back into context, forks across files.
export type BothFilesView = BothFilesView_Serialize;
export type ComparisonView = ComparisonView_Serialize;
export type FileLink = FileLink_Serialize;
export type FilesView = FilesView_Serialize;
export type ForkView = ForkView_Serialize;
export type ForkedFrom = ForkedFrom_Serialize;
export type RecallDone = RecallDone_Serialize;
export type RecallPreview = RecallPreview_Serialize;
export type SideView = SideView_Serialize;
export type SummaryLink = SummaryLink_Serialize;

/** A rejected command, carrying the typed `{kind, message, hint}`. */
export class CommandError extends Error {
  constructor(public readonly ipc: IpcError) {
    super(ipc.message);
  }
}

/** What the user is told of a failure: a command's message and hint, or the error as text. */
export function errorText(e: unknown): string {
  if (e instanceof CommandError) return `${e.ipc.message}. ${e.ipc.hint}`;
  return String(e);
}

type Res<T> = { status: "ok"; data: T } | { status: "error"; error: IpcError };

/** Unwrap a command result; errors become a CommandError so callers can branch on `kind`. */
export async function call<T>(p: Promise<Res<T>>): Promise<T> {
  const r = await p;
  if (r.status === "ok") return r.data;
  throw new CommandError(r.error);
}

export const api = commands;
