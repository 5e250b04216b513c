// astsummary: a small libTooling program for the real-world link tests (tests/realworld/libtooling.sh).
//
//   astsummary [--resource-dir=DIR] FILE [-- COMPILER ARGS...]
//
// Parses FILE with clang::tooling::ClangTool and prints, for every declaration written in FILE itself (not in its
// headers): the declaration kind, qualified name, type, line:column, the number of statements in its body, and its
// pretty-printed declaration (for functions, without the body). Then it runs a syntax-only pass
// (runToolOnCodeWithArgs) over a snippet with deliberate errors; clang's diagnostics go to stderr. The output contains no
// addresses, so two builds of this program (linked by different linkers) must print exactly the same text.
#include "clang/AST/ASTConsumer.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace clang;

namespace {

unsigned countStmts(const Stmt *S) {
    if (!S) return 0;
    unsigned N = 1;
    for (const Stmt *Child : S->children()) N += countStmts(Child);
    return N;
}

class Summary : public RecursiveASTVisitor<Summary> {
public:
    explicit Summary(ASTContext &Ctx) : Ctx(Ctx), SM(Ctx.getSourceManager()) {}

    bool VisitNamedDecl(NamedDecl *D) {
        SourceLocation Loc = SM.getExpansionLoc(D->getLocation());
        if (Loc.isInvalid() || !SM.isWrittenInMainFile(Loc) || D->isImplicit()) return true;
        ++Kinds[D->getDeclKindName()];
        std::string Out;
        llvm::raw_string_ostream OS(Out);
        OS << D->getDeclKindName() << ' ' << D->getQualifiedNameAsString();
        if (auto *VD = dyn_cast<ValueDecl>(D)) OS << " : " << VD->getType().getAsString();
        OS << " @" << SM.getExpansionLineNumber(Loc) << ':' << SM.getExpansionColumnNumber(Loc);
        if (auto *FD = dyn_cast<FunctionDecl>(D)) {
            if (FD->doesThisDeclarationHaveABody()) OS << " stmts=" << countStmts(FD->getBody());
            OS << "\n    ";
            PrintingPolicy Policy(Ctx.getLangOpts());
            Policy.TerseOutput = true;
            FD->print(OS, Policy);
        }
        llvm::outs() << OS.str() << '\n';
        return true;
    }

    void printKinds() {
        llvm::outs() << "-- declaration kinds\n";
        for (auto &[Kind, N] : Kinds) llvm::outs() << Kind << ' ' << N << '\n';
    }

private:
    ASTContext &Ctx;
    SourceManager &SM;
    std::map<std::string, unsigned> Kinds;
};

class SummaryConsumer : public ASTConsumer {
public:
    void HandleTranslationUnit(ASTContext &Ctx) override {
        Summary S(Ctx);
        S.TraverseDecl(Ctx.getTranslationUnitDecl());
        S.printKinds();
    }
};

class SummaryAction : public ASTFrontendAction {
protected:
    std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &, StringRef) override {
        return std::make_unique<SummaryConsumer>();
    }
};

const char *BrokenSnippet = R"cpp(
template <typename T> struct Box { T value; T get() const { return value; } };
int f(Box<int> b) { return b.get() + missing_name; }
struct S { int x; } s = {1, 2};
)cpp";

} // namespace

int main(int argc, char **argv) {
    std::vector<std::string> Args, Extra;
    std::string File;
    bool AfterDashes = false;
    for (int I = 1; I < argc; ++I) {
        std::string A = argv[I];
        if (AfterDashes) Extra.push_back(A);
        else if (A == "--") AfterDashes = true;
        else if (A.rfind("--resource-dir=", 0) == 0) Args.push_back("-resource-dir=" + A.substr(15));
        else File = A;
    }
    if (File.empty()) {
        llvm::errs() << "usage: astsummary [--resource-dir=DIR] FILE [-- COMPILER ARGS...]\n";
        return 2;
    }
    Args.insert(Args.end(), Extra.begin(), Extra.end());

    llvm::outs() << "== AST summary of " << llvm::sys::path::filename(File) << '\n';
    tooling::FixedCompilationDatabase DB(".", Args);
    tooling::ClangTool Tool(DB, {File});
    int RC = Tool.run(tooling::newFrontendActionFactory<SummaryAction>().get());
    llvm::outs() << "-- ClangTool::run returned " << RC << '\n';

    llvm::outs() << "== syntax-only check of a broken snippet\n";
    std::vector<std::string> SnippetArgs = {"-std=c++17", "-fno-color-diagnostics"};
    bool OK = tooling::runToolOnCodeWithArgs(std::make_unique<SyntaxOnlyAction>(), BrokenSnippet, SnippetArgs,
                                             "snippet.cpp", "astsummary", std::make_shared<PCHContainerOperations>(),
                                             tooling::FileContentMappings());
    llvm::outs() << "-- runToolOnCodeWithArgs returned " << (OK ? "true" : "false") << '\n';
    return RC;
}
