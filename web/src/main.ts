import { startApp } from "./components/app.js";

startApp(document.body);
