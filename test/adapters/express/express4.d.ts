// Types for the `express4` alias (Express 4 installed under another name), borrowed from Express 5's.
declare module 'express4' {
  import express from 'express';
  export default express;
}
