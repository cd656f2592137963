// After `npm install`: when npm itself runs on a Node older than the packages need, it printed an
// EBADENGINE warning for each of them. Say once what matters: the scripts here run on the pinned Node.
// Plain JavaScript: with `--omit=dev` the pinned Node is not installed, and an old system Node runs this.
const npmNode = /\bnode\/v(\d+)\.[\d.]+/.exec(process.env.npm_config_user_agent ?? '');
if (npmNode && Number(npmNode[1]) < 22) {
  console.log(
    `\nDeskpilot: npm runs on your system's Node ${npmNode[0].slice(5)}, so it warned (EBADENGINE) about packages that need Node 22.12 or later.\n` +
      `Nothing to fix: every npm script here (npm start, npm test, npm run build) runs on Node ${process.version}, pinned by the \`node\` devDependency.\n` +
      `To run node yourself outside npm scripts, use Node 24 (\`.nvmrc\` names it for nvm, fnm and volta).\n`,
  );
}
